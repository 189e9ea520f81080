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

# How a memory says it holds no answer (normalized text).
DECLINES = (
    "i don t know",
    "i do not know",
    "don t know",
    "do not know",
    "not known",
    "unknown",
    "no information",
    "not mentioned",
    "never mentioned",
    "not say",
    "doesn t say",
    "does not say",
    "no record",
    "not in memory",
    "nothing about",
    "no mention",
    "cannot answer",
    "can t answer",
    "cannot determine",
    "can t determine",
    "not enough information",
    "does not hold",
    "doesn t hold",
    "not specified",
    "not stated",
    "no answer",
    "not available",
)


@dataclass(frozen=True)
class StringScores:
    exact: bool
    contains: bool


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def declines(answer: str) -> bool:
    normalized = f" {normalize(answer)} "
    return any(f" {phrase} " in normalized for phrase in DECLINES)


def string_scores(answer: str, expected: str | None, *, unanswerable: bool) -> StringScores:
    if unanswerable:
        declined = declines(answer)
        return StringScores(exact=declined, contains=declined)
    got, wanted = normalize(answer), normalize(expected or "")
    if not wanted:
        return StringScores(exact=False, contains=False)
    return StringScores(exact=got == wanted, contains=f" {wanted} " in f" {got} ")
