"""Queries of gb_datasets. Every query is filtered by the user who owns the dataset."""

from __future__ import annotations

from typing import TypeVar

import psycopg
from psycopg.rows import class_row

from gligabao.db.jobs import JOB_STATUS

Row = TypeVar("Row")


def list_with_counts(
    conn: psycopg.Connection,
    user_id: str,
    row_type: type[Row],
    *,
    after_name: str | None = None,
    take: int | None = None,
) -> list[Row]:
    """name, created_at, the attached ontology's name and the counts of artifacts (chunks not counted; those of asynchronous
    remembers still queued or running, and those failed, apart), entities and live edges, by name:
    those after `after_name`, at most `take` (None: all). Each count reads an index (migrations
    0023 and 0025), and only the artifacts not done are read. The page's counts come from
    gb_dataset_sizes (migration 0048): under the policies each counted index entry was tested
    against every dataset of the user."""
    return (
        conn.cursor(row_factory=class_row(row_type))
        .execute(
            f"""
        WITH page AS MATERIALIZED (
            SELECT d.id, d.name, d.created_at, d.ontology_id
            FROM gb_datasets d
            WHERE d.user_id = %(user_id)s AND (%(after)s::text IS NULL OR d.name > %(after)s::text)
            ORDER BY d.name
            LIMIT %(take)s
        )
        SELECT p.name, p.created_at, s.artifacts, a.queued, a.failed, s.entities, s.edges,
               (SELECT o.name FROM gb_ontologies o WHERE o.id = p.ontology_id) AS ontology
        FROM page p
        JOIN gb_dataset_sizes(ARRAY(SELECT id FROM page)) AS s ON s.dataset_id = p.id
        CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE status IN ('pending', 'running')) AS queued,
                   count(*) FILTER (WHERE status = 'failed') AS failed
            FROM (SELECT {JOB_STATUS} AS status FROM gb_artifacts a
                  WHERE a.dataset_id = p.id AND a.status <> 'done') AS a  -- only the ones not done
        ) AS a
        ORDER BY p.name
        """,
            {"user_id": user_id, "after": after_name, "take": take},
        )
        .fetchall()
    )


# The stores of a dataset run one at a time, in the order they asked (db/connection.py sends this
# with BEGIN when a transaction locks its dataset). Two statements, each with a snapshot of its own:
# the row is created when missing (a row another transaction is inserting is waited for, then
# seen), then locked. A lock that only locks keeps the waiters in order (PostgreSQL queues them);
# the no-op update this replaced wrote a new version of the row each time, which sent its waiters
# back to retry and let a late store overtake (one waited 2.4 s while 14 later ones went first,
# bench/reference_load.py). The checks a store makes under the lock are exact (who creates the
# dataset, whether a fact is already live, whether an edge is still live when superseded); no
# deadlock: it is the first lock a store takes, and FOR NO KEY UPDATE does not block the
# foreign-key checks of other writers. The literals are bound by the caller.
LOCK_OR_CREATE = (
    "INSERT INTO gb_datasets (user_id, name) VALUES ({user}, {name}) ON CONFLICT (user_id, name) DO NOTHING;"
    " SELECT id FROM gb_datasets WHERE user_id = {user} AND name = {name} FOR NO KEY UPDATE"
)


def delete(conn: psycopg.Connection, user_id: str, name: str) -> bool:
    """Delete the dataset; its artifacts, entities, edges, links and vectors go with it (cascades)."""
    row = conn.execute(
        "DELETE FROM gb_datasets WHERE user_id = %s AND name = %s RETURNING id", [user_id, name]
    ).fetchone()
    return row is not None
