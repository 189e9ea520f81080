"""The suite file: JSON Lines, one item a line, remembers then questions.

    {"type": "remember", "id": "alice-1", "dataset": "alice", "session_id": "a",
     "reference_time": "2023-05-01T09:00:00Z", "text": "Alice works at Acme."}
    {"type": "question", "id": "q-work", "dataset": "alice", "category": "temporal",
     "question": "Where does Alice work?", "answer": "Acme"}
    {"type": "question", "id": "q-pet", "dataset": "alice", "category": "unanswerable",
     "question": "What is Alice's cat called?", "unanswerable": true}

A dataset's remembers are sent in the order of the file (a later text may contradict an earlier
one); its questions are asked once all of them are in. `meta` holds whatever a converted
benchmark keeps of its source (ids, original category); it is never sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from gligabao.inputs import check_path_name
from gligabao.timefmt import parse_rfc3339

ITEM_ID_MAX_CHARS = 200


class SuiteError(ValueError):
    """The suite file is not a suite: names the line and the problem."""


def _text(value: object) -> object:
    # Benchmarks store some answers as numbers (LoCoMo: 2022).
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _time(value: object) -> object:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 time with an offset")
    parse_rfc3339(value)  # raises ValueError naming the problem
    return value


ItemId = Annotated[str, Field(min_length=1, max_length=ITEM_ID_MAX_CHARS)]
Time = Annotated[str | None, BeforeValidator(_time)]
Text = Annotated[str, BeforeValidator(_text)]


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: ItemId
    dataset: str = "main"
    session_id: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("dataset")
    @classmethod
    def _dataset_name(cls, value: str) -> str:
        return check_path_name(value, "dataset")  # the API's rule for dataset names


class RememberItem(Item):
    type: Literal["remember"]
    text: Annotated[str, Field(min_length=1)]
    reference_time: Time = None

    def body(self) -> dict[str, Any]:
        """What is sent to POST /v1/gb/remember, without user_id and eval."""
        body: dict[str, Any] = {"dataset": self.dataset, "text": self.text}
        if self.session_id:
            body["session_id"] = self.session_id
        if self.reference_time:
            body["reference_time"] = self.reference_time
        return body


class QuestionItem(Item):
    type: Literal["question"]
    question: Annotated[str, Field(min_length=1)]
    answer: Text | None = None
    category: Annotated[str, Field(min_length=1, max_length=100)] = "uncategorized"
    unanswerable: bool = False
    as_of: Time = None

    @model_validator(mode="after")
    def _answer_given(self) -> QuestionItem:
        if not self.unanswerable and not (self.answer or "").strip():
            raise ValueError('a question needs an "answer" (or "unanswerable": true)')
        return self

    def body(self) -> dict[str, Any]:
        """What is sent to POST /v1/gb/query, without user_id and eval."""
        body: dict[str, Any] = {"dataset": self.dataset, "query": self.question}
        if self.session_id:
            body["session_id"] = self.session_id
        if self.as_of:
            body["as_of"] = self.as_of
        return body


SuiteItem = Annotated[RememberItem | QuestionItem, Field(discriminator="type")]
_ITEM = TypeAdapter(SuiteItem)


@dataclass(frozen=True)
class Suite:
    items: tuple[RememberItem | QuestionItem, ...]

    @property
    def remembers(self) -> list[RememberItem]:
        return [item for item in self.items if isinstance(item, RememberItem)]

    @property
    def questions(self) -> list[QuestionItem]:
        return [item for item in self.items if isinstance(item, QuestionItem)]

    def remembers_by_dataset(self) -> dict[str, list[RememberItem]]:
        """Each dataset's remembers, in the order of the file."""
        grouped: dict[str, list[RememberItem]] = {}
        for item in self.remembers:
            grouped.setdefault(item.dataset, []).append(item)
        return grouped


def parse_item(data: Any) -> RememberItem | QuestionItem:
    return _ITEM.validate_python(data)


def load_suite(path: Path) -> Suite:
    """The suite in `path`; a SuiteError names the first line that is wrong."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise SuiteError(f"{path}: cannot be read ({error})") from None
    return parse_suite(lines, str(path))


def parse_suite(lines: Iterable[str], name: str = "suite") -> Suite:
    items: list[RememberItem | QuestionItem] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = parse_item(json.loads(line))
        except ValueError as error:  # json's and pydantic's errors both
            raise SuiteError(f"{name}:{number}: {_problem(error)}") from None
        if item.id in seen:
            raise SuiteError(f"{name}:{number}: the id {item.id!r} is used twice")
        seen.add(item.id)
        items.append(item)
    if not any(isinstance(item, QuestionItem) for item in items):
        raise SuiteError(f"{name}: no question")
    return Suite(tuple(items))


def dump_suite(items: Sequence[RememberItem | QuestionItem], path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for item in items:
            out.write(json.dumps({"type": item.type, **item.model_dump(exclude_defaults=True, mode="json")}))
            out.write("\n")


def _problem(error: ValueError) -> str:
    if isinstance(error, ValidationError):
        return "; ".join(
            _field_problem(problem) for problem in error.errors(include_input=False, include_url=False)
        )
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON ({error.msg})"
    return str(error)


def _field_problem(problem: Any) -> str:
    # The first part of the path is the item's type (the union's tag), not a field.
    path = [str(part) for part in problem["loc"]]
    fields = ".".join(path[1:] if path[:1] in (["remember"], ["question"]) else path)
    message = problem["msg"].removeprefix("Value error, ")
    return f"{fields}: {message}" if fields else message
