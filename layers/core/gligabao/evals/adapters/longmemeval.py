"""LongMemEval (`longmemeval_s.json`, `longmemeval_m.json`, `longmemeval_oracle.json`) into a suite.

Each file is a list of 500 questions, each with its own haystack of chat sessions:

    {"question_id": "e47becba", "question_type": "single-session-user",
     "question": "What degree did I graduate with?", "answer": "Business Administration",
     "question_date": "2023/05/30 (Tue) 23:40",
     "haystack_session_ids": ["sharegpt_...", "answer_280352e9", ...],
     "haystack_dates": ["2023/05/20 (Sat) 02:21", ...],
     "haystack_sessions": [[{"role": "user", "content": "...", "has_answer": true}, ...], ...],
     "answer_session_ids": ["answer_280352e9"]}

Each question is a dataset of its own (its haystack is its own): a remember per session at its
date, in the order of the dates (the oracle file does not sort them), then the question, asked
`as_of` its date. A question id ending in `_abs` is an abstention question: unanswerable, category
`abstention` (its `answer` explains what is missing; the judge sees it as a note).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gligabao.evals.adapters import dataset_name, session_remembers
from gligabao.evals.suite import QuestionItem, RememberItem, SuiteError
from gligabao.timefmt import rfc3339

ABSTENTION_SUFFIX = "_abs"
ABSTENTION_CATEGORY = "abstention"


def parse_longmemeval_time(text: str) -> str:
    """ "2023/05/20 (Sat) 02:21" -> "2023-05-20T02:21:00Z" (the file gives no zone: UTC)."""
    words = [word for word in text.split() if not (word.startswith("(") and word.endswith(")"))]
    cleaned = " ".join(words)
    for pattern in ("%Y/%m/%d %H:%M", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d"):
        try:
            return rfc3339(datetime.strptime(cleaned, pattern).replace(tzinfo=UTC))
        except ValueError:
            continue
    raise ValueError(f"unknown LongMemEval date {text!r}")


def convert_instance(instance: dict[str, Any]) -> list[RememberItem | QuestionItem]:
    question_id = str(instance["question_id"])
    dataset = dataset_name(question_id, "lme-")
    sessions = instance.get("haystack_sessions") or []
    ids = instance.get("haystack_session_ids") or [f"session_{n}" for n in range(1, len(sessions) + 1)]
    dates = instance.get("haystack_dates") or [None] * len(sessions)
    if not len(sessions) == len(ids) == len(dates):
        raise ValueError("haystack_sessions, haystack_session_ids and haystack_dates differ in length")
    evidence = set(instance.get("answer_session_ids") or [])
    dated = [
        (parse_longmemeval_time(date) if date else None, sid, turns)
        for sid, date, turns in zip(ids, dates, sessions, strict=True)
    ]
    dated.sort(key=lambda session: session[0] or "")  # stable: same-time sessions keep their order
    items: list[RememberItem | QuestionItem] = []
    for number, (when, session_id, turns) in enumerate(dated, start=1):
        lines = [
            f"{turn.get('role', '?')}: {str(turn.get('content') or '').strip()}"
            for turn in turns
            if str(turn.get("content") or "").strip()
        ]
        if not lines:
            continue
        items += session_remembers(
            item_id=f"{dataset}/{number:03d}",
            dataset=dataset,
            session_id=str(session_id),
            reference_time=when,
            lines=lines,
            meta={"question_id": question_id, "session_id": session_id, "evidence": session_id in evidence},
        )
    unanswerable = question_id.endswith(ABSTENTION_SUFFIX)
    question_type = instance.get("question_type") or "uncategorized"
    question_date = instance.get("question_date")
    items.append(
        QuestionItem(
            type="question",
            id=f"{dataset}/question",
            dataset=dataset,
            question=instance["question"],
            answer=instance.get("answer"),
            category=ABSTENTION_CATEGORY if unanswerable else question_type,
            unanswerable=unanswerable,
            as_of=parse_longmemeval_time(question_date) if question_date else None,
            meta={"question_id": question_id, "question_type": question_type},
        )
    )
    return items


def convert_longmemeval(source: Path, *, limit: int | None = None) -> list[RememberItem | QuestionItem]:
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SuiteError(f"{source}: not a LongMemEval file ({error})") from None
    if not isinstance(data, list):
        raise SuiteError(f"{source}: not a LongMemEval file (a list of questions is expected)")
    items: list[RememberItem | QuestionItem] = []
    for index, instance in enumerate(data[:limit] if limit else data):
        try:
            items += convert_instance(instance)
        except (KeyError, TypeError, ValueError) as error:
            raise SuiteError(f"{source}: question {index}: {error!r}") from None
    return items
