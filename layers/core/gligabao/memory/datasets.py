"""Datasets: a user's named graphs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gligabao.db import datasets as dataset_rows
from gligabao.errors import NotFound
from gligabao.memory.ports import Memory


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


def list_datasets(memory: Memory, user_id: str) -> list[DatasetSummary]:
    with memory.database.transaction(user_id) as uow:
        return dataset_rows.list_with_counts(uow.conn, user_id, DatasetSummary)


def delete_dataset(memory: Memory, user_id: str, name: str) -> None:
    with memory.database.transaction(user_id) as uow:
        if not dataset_rows.delete(uow.conn, user_id, name):
            raise NotFound(f"dataset {name!r} not found")
