"""The string scores of an answer, beside the judge's: exact and contains, on normalized text.

Normalized as SQuAD and LoCoMo do: lowercase, punctuation and the articles a/an/the dropped,
whitespace collapsed. `exact`: the answer is the expected answer; `contains`: the expected answer
is inside the answer (a sentence that says it). For an unanswerable question there is no
expected text: both say whether the answer declines, by its wording.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans({character: " " for character in string.punctuation + "‘’“”–—"})

# How a memory says it holds no answer (on normalized text: "don't" is "don t").
_NOT = r"(?:don t|do not|doesn t|does not|didn t|did not|can t|cannot|can not|couldn t|could not|isn t|is not|wasn t|was not)"
DECLINE = re.compile(
    rf"\b(?:{_NOT} (?:know|say|mention|tell|recall|remember|find|determine|answer|hold|contain|have (?:any|enough|that|this)))\b"
    r"|\b(?:no|any|not enough|insufficient) (?:information|record|records|mention|details|data|memory)\b"
    r"|\b(?:not|never) (?:mentioned|stated|specified|known|recorded|available|in memory)\b"
    r"|\b(?:unknown|nothing about|nothing in memory)\b"
)


@dataclass(frozen=True)
class StringScores:
    exact: bool
    contains: bool


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def declines(answer: str) -> bool:
    return DECLINE.search(normalize(answer)) is not None


def string_scores(answer: str, expected: str | None, *, unanswerable: bool) -> StringScores:
    if unanswerable:
        declined = declines(answer)
        return StringScores(exact=declined, contains=declined)
    got, wanted = normalize(answer), normalize(expected or "")
    if not wanted:
        return StringScores(exact=False, contains=False)
    return StringScores(exact=got == wanted, contains=f" {wanted} " in f" {got} ")
