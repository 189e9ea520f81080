"""The words of a text as the offline providers compare them: lowercased, lightly stemmed."""

from __future__ import annotations

import re

SUFFIXES = ("ing", "ed", "es", "s")


def stem(word: str) -> str:
    """A light stem, so that "works" meets "work" and "lives" meets "live" ("lives" -> "liv",
    "live" -> "live" do not meet: a stem is a rule, not a dictionary)."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def stems(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    return [stem(word) for word in re.findall(r"[\w']+", text.lower()) if word not in stopwords]
