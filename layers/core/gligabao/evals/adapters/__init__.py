"""Converters of public memory benchmarks into suites: `gligabao eval convert locomo|longmemeval IN OUT`.

Each reads the file a user downloads, as published, and writes the suite's JSON Lines: one
dataset per conversation (LoCoMo) or per question's haystack (LongMemEval), a remember per session
with the session's date as its reference time, then the questions.
"""

from __future__ import annotations

import re

from gligabao.evals.suite import RememberItem

# A session longer than this is sent as several remembers (same session, same time), cut between
# turns: the API remembers a text above 24,000 characters asynchronously, without a trajectory.
MAX_TEXT_CHARS = 20_000
SESSION_ID_MAX_CHARS = 128
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def dataset_name(raw: str, prefix: str = "") -> str:
    """A dataset name the API accepts (1-64 of A-Z a-z 0-9 _ . -) from a benchmark's id."""
    name = _NOT_IN_NAME.sub("-", f"{prefix}{raw}").strip("-") or "dataset"
    return name[:64]


def session_remembers(
    *,
    item_id: str,
    dataset: str,
    session_id: str,
    reference_time: str | None,
    lines: list[str],
    meta: dict,
) -> list[RememberItem]:
    """A session's lines as one remember, or as several of at most MAX_TEXT_CHARS each."""
    parts: list[list[str]] = [[]]
    size = 0
    for line in lines:
        line = line[:MAX_TEXT_CHARS]  # a single turn longer than that is cut
        if parts[-1] and size + len(line) + 1 > MAX_TEXT_CHARS:
            parts.append([])
            size = 0
        parts[-1].append(line)
        size += len(line) + 1
    texts = ["\n".join(part) for part in parts if part]
    return [
        RememberItem(
            type="remember",
            id=item_id if len(texts) == 1 else f"{item_id}/part{number}",
            dataset=dataset,
            session_id=session_id[:SESSION_ID_MAX_CHARS],
            reference_time=reference_time,
            text=text,
            meta=meta,
        )
        for number, text in enumerate(texts, start=1)
    ]
