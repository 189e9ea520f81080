"""The offline extractor: entities and facts from plain declarative sentences, by rules.

It reads what a careful reader would from sentences such as "Alice works at Acme and lives in
Paris.", "She moved to Lyon in 2021.", "Bob left Acme last year.", "I am married to Carol.":
people, organisations and places (capitalised names; "I" is the user), their relations
(works_at, lives_in, married_to, born_in and a few more), and the dates that open or end them. A
fact said with "now", "moved", "left" or "no longer" keeps that word in its description: the
offline resolution reads it as a supersession cue (offline/resolution.py). Anything else (a
question, a negation, a sentence it has no rule for) yields nothing: it never guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from gligabao.ai.offline.dates import DATE, parse_date
from gligabao.ai.prompts.extract import ExtractedEdge, ExtractedEntity, Extraction
from gligabao.timefmt import rfc3339

USER = "User"  # who "I" is in a text the agent remembers ("User: I moved to Lyon.")

_WORD = r"[A-Z][\w'’&.-]*"
NAME = rf"(?:{_WORD}(?:\s+(?:(?:of|de|du|da|van|von|der|la|le|&)\s+)?{_WORD})*)"
_PRONOUNS = {"he": "person", "she": "person", "they": "any", "it": "thing", "i": "user", "we": "user"}
_SUBJECT = rf"(?P<subject>{NAME}(?:\s+and\s+{NAME})?|He|She|They|It|I|We)"
_ADVERB = r"(?:(?P<adverb>now|also|still|currently|recently|finally|just|then|later)\s+)?"
_BE = r"(?:is|am|are|was|were)"

PLACE_NOUNS = ("city", "town", "village", "country", "region", "state", "island", "capital", "district")
# (verb phrase, relation, kind): kind says what a date next to it means. "state" and "start": the
# fact began then; "end": it ended then (or by the time it was said); "past": it held and ended.
VERBS: list[tuple[str, str, str]] = [
    (r"(?:works?|is working|am working|are working) (?:at|for)", "works_at", "state"),
    (rf"{_BE} employed (?:at|by)", "works_at", "state"),
    (r"(?:joined|started (?:working )?at|(?:got|took) a (?:new )?job at|was hired by)", "works_at", "start"),
    (r"(?:left|quit|resigned from|retired from|was (?:fired|laid off) from)", "works_at", "end"),
    (r"(?:no longer works?|stopped working) (?:at|for)", "works_at", "end"),
    (r"(?:worked|used to work) (?:at|for)", "works_at", "past"),
    (rf"(?:lives?|{_BE} living|resides?) in", "lives_in", "state"),
    (r"(?:moved (?:back )?to|relocated to|settled in)", "lives_in", "start"),
    (r"(?:no longer lives?) in", "lives_in", "end"),
    (r"(?:lived|used to live|grew up) in", "lives_in", "past"),
    (rf"{_BE} married to", "married_to", "state"),
    (r"(?:married|wed|got married to)", "married_to", "start"),
    (rf"(?:divorced|{_BE} divorced from|separated from)", "married_to", "end"),
    (r"was married to", "married_to", "past"),
    (rf"(?:{_BE} the (?:husband|wife|spouse) of)", "married_to", "state"),
    (r"was born in", "born_in", "start"),
    (rf"{_BE} (?:located|headquartered|situated) in", "located_in", "state"),
    (rf"{_BE} (?:a|an|the) (?:{'|'.join(PLACE_NOUNS)}) (?:in|of)", "located_in", "place"),
    (r"(?:co-)?founded", "founded", "start"),
    (r"(?:studied|graduated) (?:at|from)", "studied_at", "past"),
    (rf"(?:studies|study|{_BE} studying) at", "studied_at", "state"),
    (r"(?:manages|manage|leads|lead|runs|heads)", "manages", "state"),
    (r"reports? to", "reports_to", "state"),
    (r"knows?", "knows", "state"),
    (r"met", "knows", "start"),
    (rf"{_BE} (?:a )?friends? (?:with|of)", "friend_of", "state"),
    (r"(?:owns?|bought|acquired)", "owns", "state"),
    (rf"{_BE} the (?:brother|sister|sibling) of", "sibling_of", "state"),
    (rf"{_BE} the (?:son|daughter|child) of", "child_of", "state"),
    (rf"{_BE} the (?:mother|father|parent) of", "parent_of", "state"),
]
# The types of a relation's two ends (None: the relation says nothing of it).
END_TYPES: dict[str, tuple[str | None, str | None]] = {
    "works_at": ("person", "organization"),
    "lives_in": ("person", "place"),
    "married_to": ("person", "person"),
    "born_in": ("person", "place"),
    "located_in": (None, "place"),
    "founded": ("person", "organization"),
    "studied_at": ("person", "organization"),
    "manages": ("person", None),
    "reports_to": ("person", "person"),
    "knows": ("person", "person"),
    "friend_of": ("person", "person"),
    "owns": (None, None),
    "sibling_of": ("person", "person"),
    "child_of": ("person", "person"),
    "parent_of": ("person", "person"),
}
_ORGANISATION_WORDS = re.compile(
    r"\b(?:Inc|Corp|Corporation|Ltd|LLC|GmbH|SA|AG|Company|Bank|University|College|School|Institute"
    r"|Labs?|Group|Hospital|Foundation|Agency|Studio|Systems|Technologies)\b\.?"
)
_KIND_NOUNS = {
    "place": PLACE_NOUNS,
    "organization": ("company", "startup", "firm", "bank", "university", "school", "agency", "charity"),
}
_TIME = rf"(?P<time>(?:from|between) {DATE} (?:to|until|and) {DATE}|(?:since|until|till|in|on|from) {DATE}|{DATE})"
_CLAUSE_TAIL = rf"(?:,?\s+{_TIME})?(?:\s+(?P<late_adverb>now|anymore|again))?"
_CONTINUATION = re.compile(r"^\s*(?:,\s*)?(?:and|but)\s+(?:(?:he|she|they|i|we)\s+)?", re.IGNORECASE)
_OPENING_TIME = re.compile(rf"^(?P<time>(?:in|on|since|from|by) {DATE}|{DATE}),\s+", re.IGNORECASE)
_APPOSITIVE = re.compile(rf"^(?P<name>{NAME}), (?:an?|the) (?P<description>[a-z][\w -]*?), ")
_DESCRIPTION = re.compile(rf"^(?P<name>{NAME}|He|She|I) (?:is|am) (?:an?|the) (?P<description>[a-z][\w -]*)$")
_ROLE_AT = re.compile(
    rf"^(?P<name>{NAME}|He|She|I) (?:is|am|works as) (?:an?|the) (?P<role>[A-Za-z][\w -]*?) (?:at|of|for) "
    rf"(?P<target>{NAME})$"
)
# The roles that are a relation to a person, not a job ("Bob is the husband of Carol").
_KIN = frozenset(
    "brother sister sibling son daughter child mother father parent husband wife spouse friend".split()
)
_MOVED_FROM = re.compile(
    rf"^{_SUBJECT} {_ADVERB}moved from (?P<old>{NAME}) to (?P<target>{NAME}){_CLAUSE_TAIL}"
)
# Capitalised words that open a sentence without naming anyone.
_NOT_NAMES = frozenset(
    "The This That These Those There Here A An My Our Your His Her Their Its Today Yesterday Then "
    "When While After Before If But And So Also Now Everyone Nobody Someone".split()
)
_COMPILED_VERBS = [
    (re.compile(rf"(?:{verb})\s+", re.IGNORECASE), relation, kind) for verb, relation, kind in VERBS
]
CUES = ("now", "moved", "left", "no longer", "anymore", "quit", "relocated")


@dataclass
class _Reading:
    """What the sentences of one text yielded so far, and who its pronouns point to."""

    reference: datetime
    entities: dict[str, ExtractedEntity] = field(default_factory=dict)
    edges: list[ExtractedEdge] = field(default_factory=list)
    last_person: str | None = None
    last_thing: str | None = None

    def entity(self, name: str, type_: str | None) -> str:
        if name not in self.entities:
            self.entities[name] = ExtractedEntity(name=name, type=_type_of(name, type_), description="")
        elif self.entities[name].type == "unknown" and type_:
            self.entities[name].type = type_
        return name

    def spoke_of(self, name: str) -> None:
        """`name` was a clause's subject: "she" or "it" in the next sentence may be it."""
        if self.entities[name].type == "person":
            self.last_person = name
        else:
            self.last_thing = name


def extract_sentences(text: str, reference: datetime) -> Extraction:
    """The entities and facts of `text`'s plain sentences; relative dates against `reference`."""
    reading = _Reading(reference)
    for sentence in sentences_of(text):
        _read_sentence(reading, sentence)
    entities = list(reading.entities.values())
    named = {entity.name for entity in entities}
    edges = [edge for edge in reading.edges if edge.source in named and edge.target in named]
    return Extraction(entities=entities, edges=edges)


def sentences_of(text: str) -> list[str]:
    """The text's statements: split at sentence ends and lines; a chat's assistant turns and any
    question left out ("User: ..." keeps what follows the label)."""
    kept = []
    for line in text.splitlines():
        label, _, rest = line.partition(":")
        if rest and label.strip().lower() in ("assistant", "ai", "bot", "system"):
            continue
        if rest and label.strip().lower() in ("user", "human", "me"):
            line = rest
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            sentence = sentence.strip().rstrip(".!").strip()
            if sentence and not sentence.endswith("?"):
                kept.append(_normalised(sentence))
    return kept


def _normalised(sentence: str) -> str:
    sentence = re.sub(r"\bI'm\b", "I am", sentence)
    sentence = re.sub(r"\s+", " ", sentence)
    return sentence


def _read_sentence(reading: _Reading, sentence: str) -> None:
    opening = _OPENING_TIME.match(sentence)
    opening_time = opening["time"] if opening else None
    if opening:
        sentence = sentence[opening.end() :]
        sentence = sentence[:1].upper() + sentence[1:]
    appositive = _APPOSITIVE.match(sentence)
    if appositive:
        name = reading.entity(appositive["name"], None)
        _describe(reading, name, appositive["description"])
        sentence = f"{appositive['name']} {sentence[appositive.end() :]}"
    if _read_role(reading, sentence):
        return
    before = len(reading.edges)
    _read_clauses(reading, sentence, opening_time)
    if len(reading.edges) == before:
        _read_description(reading, sentence)


def _read_role(reading: _Reading, sentence: str) -> bool:
    """ "Alice is the CTO of Acme": she works there, and that is what she is."""
    found = _ROLE_AT.match(sentence)
    if not found or found["role"].split()[-1] in _KIN:  # "the brother of", "a friend of": VERBS' relations
        return False
    subject = _subject_names(reading, found["name"])
    target = reading.entity(found["target"], "organization")
    for name in subject:
        reading.entity(name, "person")
        reading.spoke_of(name)
        _describe(reading, name, f"{found['role']} at {target}")
        _add_edge(reading, name, "works_at", target, f"{sentence}.", None, None)
    return True


def _read_description(reading: _Reading, sentence: str) -> bool:
    """ "Alice is an engineer", "Lyon is a city": what the entity is, no fact."""
    found = _DESCRIPTION.match(sentence)
    if not found:
        return False
    description = found["description"]
    words = description.split()
    kind = next((k for k, nouns in _KIND_NOUNS.items() if any(w in nouns for w in words[:3])), "person")
    for name in _subject_names(reading, found["name"]):
        reading.entity(name, kind)
        reading.spoke_of(name)
        _describe(reading, name, description)
    return True


def _read_clauses(reading: _Reading, sentence: str, opening_time: str | None) -> None:
    """ "Alice works at Acme and lives in Paris": each clause of one subject, in turn."""
    moved = _MOVED_FROM.match(sentence)
    subject_match = re.match(rf"^{_SUBJECT}\s+", sentence)
    if not subject_match:
        return
    subjects = _subject_names(reading, subject_match["subject"])
    if not subjects:
        return
    written = subject_match["subject"] if len(subjects) > 1 else subjects[0]
    if moved:
        _moved_from(reading, subjects, moved, opening_time)
        rest = sentence[moved.end() :]
    else:
        rest = sentence[subject_match.end() :]
        rest = _read_clause(reading, subjects, written, rest, opening_time)
    while rest:
        continuation = _CONTINUATION.match(rest)
        if not continuation:
            return
        rest = _read_clause(reading, subjects, written, rest[continuation.end() :], opening_time)


def _read_clause(
    reading: _Reading, subjects: list[str], written: str, rest: str, opening_time: str | None
) -> str | None:
    """One clause: [adverb] verb target [time] [now]; what follows it, or None when it has no rule."""
    adverb = re.match(_ADVERB, rest, re.IGNORECASE)
    said_adverb = adverb["adverb"] if adverb and adverb["adverb"] else None
    rest = rest[adverb.end() :] if adverb else rest
    for verb, relation, kind in _COMPILED_VERBS:
        found_verb = verb.match(rest)
        if not found_verb:
            continue
        clause = re.match(rf"(?P<target>{NAME}){_CLAUSE_TAIL}", rest[found_verb.end() :])
        if not clause:
            continue
        words = rest[: found_verb.end()] + clause.group(0)
        time = clause["time"] or opening_time
        valid_at, invalid_at = _period(time, kind, reading.reference)
        source_type, target_type = END_TYPES[relation]
        if kind == "place":
            source_type, kind = "place", "state"
        if clause["target"].split()[0] in _NOT_NAMES:
            return None
        for subject in subjects:  # named first, as the sentence names them
            reading.entity(subject, source_type)
            reading.spoke_of(subject)
        target = reading.entity(clause["target"], target_type)
        for subject in subjects:
            said = " ".join(part for part in (written, said_adverb, words) if part)
            if opening_time and not clause["time"]:
                said = f"{opening_time[:1].upper()}{opening_time[1:]}, {said}"
            _add_edge(reading, subject, relation, target, said + ".", valid_at, invalid_at)
        return rest[found_verb.end() + clause.end() :]
    return None


def _moved_from(reading: _Reading, subjects: list[str], moved: re.Match, opening_time: str | None) -> None:
    """ "Alice moved from Paris to Lyon in 2021": she lived in Paris until then, and in Lyon since."""
    time = moved["time"] or opening_time
    when, _ = _period(time, "start", reading.reference)
    old = reading.entity(moved["old"], "place")
    new = reading.entity(moved["target"], "place")
    for subject in subjects:
        reading.entity(subject, "person")
        reading.spoke_of(subject)
        ended = when or reading.reference
        _add_edge(reading, subject, "lives_in", old, f"{subject} moved from {old} to {new}.", None, ended)
        _add_edge(reading, subject, "lives_in", new, f"{subject} moved from {old} to {new}.", when, None)


def _period(time: str | None, kind: str, reference: datetime) -> tuple[datetime | None, datetime | None]:
    """(valid_at, invalid_at) of a clause from its time phrase and what its verb says."""
    dates = _dates_in(time, reference) if time else []
    lowered = (time or "").lower()
    if len(dates) == 2:
        return dates[0], dates[1]
    date = dates[0] if dates else None
    if lowered.startswith(("until", "till")):
        return None, date
    if kind == "end":
        return None, date or reference
    if kind == "past":
        return date, reference if date is None or date < reference else None
    return date, None


def _dates_in(time: str, reference: datetime) -> list[datetime]:
    found = [parse_date(match.group(0), reference) for match in re.finditer(DATE, time, re.IGNORECASE)]
    return [date for date in found if date is not None]


def _subject_names(reading: _Reading, subject: str) -> list[str]:
    """The names a subject stands for: "Alice and Bob" is two, a pronoun the one it points to."""
    pronoun = _PRONOUNS.get(subject.lower())
    if pronoun == "user":
        _describe(reading, reading.entity(USER, "person"), "the user")
        return [USER]
    if pronoun == "person" or pronoun == "any":
        return [reading.last_person] if reading.last_person else []
    if pronoun == "thing":
        return [reading.last_thing] if reading.last_thing else []
    names = [part.strip() for part in re.split(r"\s+and\s+", subject) if part.strip()]
    return [name for name in names if name.split()[0] not in _NOT_NAMES]


def _describe(reading: _Reading, name: str, description: str) -> None:
    entity = reading.entities[name]
    if not entity.description:
        entity.description = description


def _add_edge(
    reading: _Reading,
    source: str,
    relation: str,
    target: str,
    description: str,
    valid_at: datetime | None,
    invalid_at: datetime | None,
) -> None:
    if source == target:
        return
    if valid_at is not None and invalid_at is not None and invalid_at <= valid_at:
        invalid_at = None  # "worked at Acme in 2030", said in 2026: the rule cannot tell; keep it open
    reading.edges.append(
        ExtractedEdge(
            source=source,
            target=target,
            relation=relation,
            description=description,
            valid_at=rfc3339(valid_at) if valid_at else None,
            invalid_at=rfc3339(invalid_at) if invalid_at else None,
        )
    )


def _type_of(name: str, said: str | None) -> str:
    if name == USER:
        return "person"
    if _ORGANISATION_WORDS.search(name):
        return "organization"
    return said or "unknown"
