"""The offline query stage: an answer written only from the context of the query prompt
(ai/prompts/query.py), citing what it used.

The facts are scored by the words they share with the question (their names, their relation's
words and the words a question asks them with: "where" for lives_in, "work" for works_at...). The
best-scored facts are the answer, in their own sentences; a fact that ended is used only for a
question about the past or asked as of a time. With no fact, the passage that shares the most
words; with nothing, the answer says memory holds nothing about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gligabao.ai.offline.sections import section
from gligabao.ai.offline.words import stems
from gligabao.ai.prompts.query import QueryReply

NOTHING = "Nothing in memory answers that."
MOST_FACTS = 3

_EDGE = re.compile(
    r"^\[edge (?P<id>\d+)\] (?P<source>.+?)\((?P<source_id>\d+)\) --(?P<relation>[^ ]+)--> "
    r"(?P<target>.+?)\((?P<target_id>\d+)\)(?:: (?P<description>.*?))?(?: \[(?P<times>[^\]]*)\])?$"
)
_PASSAGE = re.compile(r"^\[passage (?P<id>\d+)\]")
_STOPWORDS = frozenset(
    "a an the is are was were be been do does did of in at on to for from by with and or what which who "
    "whom whose when how why does did has have had i me my you your it its this that these those "
    "now currently today still tell about know memory say says".split()
)
# The words a question asks a relation with, beyond the relation's own.
ASKED_WITH = {
    "works_at": {"work", "job", "employer", "company", "employed", "works", "working"},
    "lives_in": {"where", "live", "lives", "living", "city", "home", "reside", "based"},
    "married_to": {"married", "wife", "husband", "spouse", "partner"},
    "born_in": {"born", "birthplace", "birth", "where"},
    "located_in": {"where", "located"},
    "studied_at": {"study", "studied", "school", "university", "college"},
}
_PAST = re.compile(r"\b(?:before|previously|used to|former|formerly|past|ago|did|was|were|earlier)\b", re.I)


@dataclass(frozen=True)
class ContextFact:
    id: int
    source_id: int
    target_id: int
    words: frozenset[str]
    relation_words: frozenset[str]  # the words a question names the relation with: they count twice
    sentence: str
    ended: bool


def answer_offline(content: str) -> QueryReply:
    """The reply to the query call whose prompt content is `content`."""
    question = section(content, "question").strip()
    asked = _words(question)
    as_of = "<as_of>" in content
    facts = [fact for fact in map(_context_fact, content.splitlines()) if fact is not None]
    usable = [f for f in facts if not f.ended or as_of or _PAST.search(question)]
    scored = sorted(((_score(asked, fact), -index, fact) for index, fact in enumerate(usable)), reverse=True)
    best = [fact for score, _, fact in scored if score > 0 and score == scored[0][0]][:MOST_FACTS]
    if best:
        return QueryReply(
            answer=" ".join(fact.sentence for fact in best),
            entities=sorted({end for fact in best for end in (fact.source_id, fact.target_id)}),
            edges=[fact.id for fact in best],
        )
    passage = _best_passage(content, asked)
    if passage is not None:
        return QueryReply(answer=passage[1], passages=[passage[0]])
    return QueryReply(answer=NOTHING)


def _context_fact(line: str) -> ContextFact | None:
    found = _EDGE.match(line)
    if not found:
        return None
    relation = found["relation"]
    description = found["description"] or ""
    sentence = description or f"{found['source']} {relation.replace('_', ' ')} {found['target']}."
    words = _words(f"{found['source']} {found['target']} {description}")
    relation_words = _words(" ".join([relation.replace("_", " "), *ASKED_WITH.get(relation, ())]))
    return ContextFact(
        id=int(found["id"]),
        source_id=int(found["source_id"]),
        target_id=int(found["target_id"]),
        words=frozenset(words | relation_words),
        relation_words=frozenset(relation_words - {"where"}),  # "where" asks for a place, any place
        sentence=sentence if sentence.endswith((".", "!", "?")) else sentence + ".",
        ended="invalid_at=" in (found["times"] or ""),
    )


def _score(asked: set[str], fact: ContextFact) -> int:
    """The words shared with the question, a word naming the fact's relation counting twice: "where
    does Alice work?" is about her job more than about her city."""
    return len(asked & fact.words) + len(asked & fact.relation_words)


def _best_passage(content: str, asked: set[str]) -> tuple[int, str] | None:
    """The passage sharing the most words with the question, as (id, its best sentence)."""
    best: tuple[int, int, str] | None = None
    current: int | None = None
    for line in section(content, "passages").splitlines():
        opening = _PASSAGE.match(line)
        if opening:
            current = int(opening["id"])
            continue
        if current is None or not line.startswith(("text: ", "summary: ")):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line.partition(": ")[2]):
            score = len(asked & _words(sentence))
            if score and (best is None or score > best[0]):
                best = (score, current, sentence.strip())
    return (best[1], best[2]) if best else None


def _words(text: str) -> set[str]:
    return set(stems(text, _STOPWORDS))
