"""LoCoMo (`locomo10.json`, snap-research/locomo) into a suite.

The file is a list of conversations:

    {"sample_id": "conv-26",
     "conversation": {"speaker_a": "Caroline", "speaker_b": "Melanie",
                      "session_1_date_time": "1:56 pm on 8 May, 2023",
                      "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "...",
                                     "blip_caption": "a photo of ..."}, ...], ...},
     "qa": [{"question": "...", "answer": "7 May 2023", "evidence": ["D1:3"], "category": 2},
            {"question": "...", "adversarial_answer": "...", "evidence": [...], "category": 5}]}

Each conversation is a dataset; each session a remember at its date (read as UTC: the file gives
no zone); each qa a question. The categories are numbers in the file; by their counts in
locomo10.json (282, 321, 96, 841, 446) they are 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial. An adversarial question asks about something the conversation never
said: it is unanswerable, and only a decline is right.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gligabao.evals.adapters import dataset_name, session_remembers
from gligabao.evals.suite import QuestionItem, RememberItem, SuiteError
from gligabao.timefmt import rfc3339

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
UNANSWERABLE_CATEGORY = 5
_SESSION_KEY = re.compile(r"session_(\d+)")


def parse_locomo_time(text: str) -> str:
    """ "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00Z"."""
    cleaned = " ".join(text.replace(",", " ").split())
    for pattern in ("%I:%M %p on %d %B %Y", "%I:%M %p on %d %b %Y", "%d %B %Y", "%d %b %Y"):
        try:
            return rfc3339(datetime.strptime(cleaned, pattern).replace(tzinfo=UTC))
        except ValueError:
            continue
    raise ValueError(f"unknown LoCoMo date {text!r}")


def _turn_line(turn: dict[str, Any]) -> str:
    line = f"{turn.get('speaker', '?')}: {str(turn.get('text') or '').strip()}"
    caption = turn.get("blip_caption")
    return f"{line} [shares a photo: {caption}]" if caption else line


def convert_conversation(sample: dict[str, Any], index: int) -> list[RememberItem | QuestionItem]:
    sample_id = str(sample.get("sample_id") or f"locomo-{index}")
    dataset = dataset_name(sample_id)
    conversation = sample["conversation"]
    numbers = sorted(
        int(match.group(1))
        for key, value in conversation.items()
        if (match := _SESSION_KEY.fullmatch(key)) and isinstance(value, list)
    )
    items: list[RememberItem | QuestionItem] = []
    for number in numbers:
        lines = [_turn_line(turn) for turn in conversation[f"session_{number}"] if turn.get("text")]
        if not lines:
            continue
        when = conversation.get(f"session_{number}_date_time")
        items += session_remembers(
            item_id=f"{dataset}/session_{number}",
            dataset=dataset,
            session_id=f"session_{number}",
            reference_time=parse_locomo_time(when) if when else None,
            lines=lines,
            meta={"sample_id": sample_id, "session": number, "date_time": when},
        )
    for number, qa in enumerate(sample.get("qa") or [], start=1):
        category = qa.get("category")
        unanswerable = category == UNANSWERABLE_CATEGORY
        answer = qa.get("answer")
        meta = {"sample_id": sample_id, "locomo_category": category, "evidence": qa.get("evidence") or []}
        if unanswerable and qa.get("adversarial_answer"):
            meta["adversarial_answer"] = qa["adversarial_answer"]
        if not unanswerable and (answer is None or str(answer).strip() == ""):
            continue  # a question without its answer cannot be scored
        items.append(
            QuestionItem(
                type="question",
                id=f"{dataset}/qa_{number}",
                dataset=dataset,
                question=qa["question"],
                answer=None if unanswerable else answer,
                category=CATEGORIES.get(category, f"category-{category}"),
                unanswerable=unanswerable,
                meta=meta,
            )
        )
    return items


def convert_locomo(source: Path, *, limit: int | None = None) -> list[RememberItem | QuestionItem]:
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SuiteError(f"{source}: not a LoCoMo file ({error})") from None
    if not isinstance(data, list):
        raise SuiteError(f"{source}: not a LoCoMo file (a list of conversations is expected)")
    items: list[RememberItem | QuestionItem] = []
    for index, sample in enumerate(data[:limit] if limit else data):
        try:
            items += convert_conversation(sample, index)
        except (KeyError, TypeError, ValueError) as error:
            raise SuiteError(f"{source}: conversation {index}: {error!r}") from None
    return items
