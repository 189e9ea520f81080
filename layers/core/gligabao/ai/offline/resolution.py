"""The offline resolve stage: which stored facts a new fact repeats or makes no longer true, by rules
over the lines of the resolve prompt (ai/prompts/resolve.py).

- a duplicate: the same source, relation and target (names compared case- and space-blind);
- a contradiction: the same source and relation with another target, for a relation that holds
  one target at a time (lives_in, married_to, born_in), or for any relation when the new fact
  says it with a supersession cue ("now works at", "moved", "left": offline/sentences.py keeps
  the word in the fact's description). A fact that ended (an `until` time) contradicts nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gligabao.ai.offline.sections import section
from gligabao.ai.offline.sentences import CUES
from gligabao.ai.prompts.resolve import Resolution, WindowResolution

ONE_AT_A_TIME = frozenset({"lives_in", "married_to", "born_in", "is_married_to"})

_LINE = re.compile(r"^\[(?:id )?(?P<key>\d+)\] (?P<body>.+)$")
_SAID = re.compile(r" \[said [^\]]*\]$")
_TIMES = re.compile(r" \((?P<times>(?:valid from|until) [^()]*)\)$")
_RELATION = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
_CUE = re.compile(rf"\b(?:{'|'.join(re.escape(cue) for cue in CUES)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class PromptFact:
    """A fact line of the resolve prompt, read back."""

    key: int
    source: str
    relation: str
    target: str
    description: str
    ended: bool

    @property
    def ends(self) -> tuple[str, str]:
        return _folded(self.source), _folded(self.target)


def resolve_offline(content: str, *, window: bool) -> Resolution | WindowResolution:
    """The decisions of the resolve call whose prompt content is `content`."""
    stored = facts_in(content, "stored_facts")
    new = facts_in(content, "new_facts")
    decisions = []
    for position, fact in enumerate(new):
        duplicate_of, contradicts = judged_against(fact, stored)
        decision = {"fact": fact.key, "duplicate_of": duplicate_of, "contradicts": contradicts}
        if window:
            duplicate_of_new, contradicts_new = judged_against(fact, new[:position])
            decision |= {"duplicate_of_new": duplicate_of_new, "contradicts_new": contradicts_new}
        if any(value not in (None, []) for name, value in decision.items() if name != "fact"):
            decisions.append(decision)  # a fact with neither may be left out (the prompt says so)
    reply = WindowResolution if window else Resolution
    return reply.model_validate({"facts": decisions})


def judged_against(fact: PromptFact, others: list[PromptFact]) -> tuple[int | None, list[int]]:
    """(the fact `fact` repeats, the facts it contradicts) among `others`."""
    duplicate_of = None
    contradicts = []
    for other in others:
        if other.ends == fact.ends and other.relation == fact.relation:
            duplicate_of = other.key if duplicate_of is None else duplicate_of
        elif _contradicts(fact, other):
            contradicts.append(other.key)
    return duplicate_of, contradicts


def _contradicts(fact: PromptFact, other: PromptFact) -> bool:
    if fact.ended or other.relation != fact.relation or other.ends[0] != fact.ends[0]:
        return False
    return fact.relation in ONE_AT_A_TIME or bool(_CUE.search(fact.description))


def facts_in(content: str, tag: str) -> list[PromptFact]:
    lines = section(content, tag).splitlines()
    return [fact for fact in map(read_fact_line, lines) if fact is not None]


def read_fact_line(line: str) -> PromptFact | None:
    """`[id 12] Alice works_at Acme: Alice works at Acme. (valid from ..., until ...)` read back;
    None for a line that is not one."""
    found = _LINE.match(line.strip())
    if not found:
        return None
    body = _SAID.sub("", found["body"])
    times = _TIMES.search(body)
    if times:
        body = body[: times.start()]
    head, _, description = body.partition(": ")
    words = head.split()
    at = next((i for i in range(1, len(words) - 1) if "_" in words[i] and _RELATION.match(words[i])), None)
    if at is None:
        at = next((i for i in range(1, len(words) - 1) if _RELATION.match(words[i])), None)
    if at is None:
        return None
    return PromptFact(
        key=int(found["key"]),
        source=" ".join(words[:at]),
        relation=words[at],
        target=" ".join(words[at + 1 :]),
        description=description,
        ended=bool(times and "until " in times["times"]),
    )


def _folded(name: str) -> str:
    return " ".join(name.casefold().split())
