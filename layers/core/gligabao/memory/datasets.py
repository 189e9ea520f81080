"""Datasets: a user's named graphs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gligabao.db import datasets as dataset_rows
from gligabao.errors import NotFound
from gligabao.memory.cursors import decode_cursor, encode_cursor, text
from gligabao.memory.ports import Memory
from gligabao.memory.readback import page_size

DATASET_NAME_MAX_CHARS = 64  # the names' rule (migration 0001)


@dataclass(frozen=True)
class DatasetSummary:
    name: str
    created_at: datetime
    artifacts: int  # texts and images remembered (chunks not counted)
    queued: int  # of them, asynchronous remembers not done yet: pending (or waiting for a retry) or running
    failed: int  # of them, asynchronous remembers that failed (each artifact says why)
    entities: int
    edges: int  # live edges: not superseded
    ontology: str | None  # the ontology attached to it


@dataclass(frozen=True)
class DatasetPage:
    datasets: list[DatasetSummary]
    next_cursor: str | None  # None on the last page


def list_datasets(memory: Memory, user_id: str) -> list[DatasetSummary]:
    """Every dataset of the user, by name."""
    with memory.database.transaction(user_id) as uow:
        return dataset_rows.list_with_counts(uow.conn, user_id, DatasetSummary)


def dataset_page(
    memory: Memory, user_id: str, *, limit: int | None = None, cursor: str | None = None
) -> DatasetPage:
    """A page of the user's datasets by name: `limit` of them (default and most: the read-back
    pages' most, so that a caller that never pages still gets them all up to it), then a
    `next_cursor` while more remain."""
    take = page_size(memory.limits, memory.limits.readback_page_max if limit is None else limit)
    after = decode_cursor(cursor, "datasets", after=text(DATASET_NAME_MAX_CHARS))["after"] if cursor else None
    with memory.database.transaction(user_id) as uow:
        rows = dataset_rows.list_with_counts(
            uow.conn, user_id, DatasetSummary, after_name=after, take=take + 1
        )
    page = rows[:take]
    return DatasetPage(page, encode_cursor("datasets", after=page[-1].name) if len(rows) > take else None)


def delete_dataset(memory: Memory, user_id: str, name: str) -> None:
    with memory.database.transaction(user_id) as uow:
        if not dataset_rows.delete(uow.conn, user_id, name):
            raise NotFound(f"dataset {name!r} not found")
