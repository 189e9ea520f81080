"""Erasing a user: every row of the user in every gb_ table, in one transaction.

The user's rows hang from three roots. `gb_datasets` holds everything a dataset holds (artifacts
and their chunks, images, entities, edges, their provenance and session links, the recency and
description tables, prepared texts, trajectories, asynchronous jobs, which are artifact rows):
their foreign keys cascade from it. `gb_inferences` (kept past a dataset's deletion for the cost
history) and `gb_idempotency_records` carry the user's id themselves. The inferences go first,
so that the cascade from the datasets (SET NULL on gb_inferences) has nothing left to update.
`gb_ontologies` carry the user's id too and go last: a dataset attached to one restricts its
deletion until the dataset is gone.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg


@dataclass(frozen=True)
class ErasedRows:
    datasets: int
    inferences: int
    idempotency_records: int
    ontologies: int


def erase_user(conn: psycopg.Connection, user_id: str) -> ErasedRows:
    inferences = conn.execute("DELETE FROM gb_inferences WHERE user_id = %s", [user_id]).rowcount
    records = conn.execute("DELETE FROM gb_idempotency_records WHERE user_id = %s", [user_id]).rowcount
    datasets = conn.execute("DELETE FROM gb_datasets WHERE user_id = %s", [user_id]).rowcount
    ontologies = conn.execute("DELETE FROM gb_ontologies WHERE user_id = %s", [user_id]).rowcount
    return ErasedRows(
        datasets=datasets, inferences=inferences, idempotency_records=records, ontologies=ontologies
    )
