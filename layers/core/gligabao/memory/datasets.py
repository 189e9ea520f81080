"""Datasets: a user's named graphs."""

from __future__ import annotations

from gligabao.db import datasets as dataset_rows
from gligabao.db.connection import user_transaction
from gligabao.errors import NotFound
from gligabao.timefmt import rfc3339


def list_datasets(user_id: str) -> list[dict]:
    with user_transaction(user_id) as conn:
        rows = dataset_rows.list_with_counts(conn, user_id)
    return [
        {
            "name": row["name"],
            "created_at": rfc3339(row["created_at"]),
            "artifacts": row["artifacts"],
            "entities": row["entities"],
            "edges": row["edges"],
        }
        for row in rows
    ]


def delete_dataset(user_id: str, name: str) -> None:
    with user_transaction(user_id) as conn:
        if not dataset_rows.delete(conn, user_id, name):
            raise NotFound(f"dataset {name!r} not found")
