"""Queries of gb_datasets. Every query is filtered by the user who owns the dataset."""

from __future__ import annotations

import psycopg


def list_with_counts(conn: psycopg.Connection, user_id: str) -> list[dict]:
    return conn.execute(
        """
        SELECT d.name, d.created_at,
               (SELECT count(*) FROM gb_artifacts a WHERE a.dataset_id = d.id AND a.kind <> 'chunk') AS artifacts,
               (SELECT count(*) FROM gb_entities e WHERE e.dataset_id = d.id) AS entities,
               (SELECT count(*) FROM gb_edges g WHERE g.dataset_id = d.id AND g.expired_at IS NULL) AS edges
        FROM gb_datasets d
        WHERE d.user_id = %s
        ORDER BY d.name
        """,
        [user_id],
    ).fetchall()


def find_id(conn: psycopg.Connection, user_id: str, name: str) -> int | None:
    row = conn.execute("SELECT id FROM gb_datasets WHERE user_id = %s AND name = %s", [user_id, name]).fetchone()
    return row["id"] if row else None


def get_or_create_id(conn: psycopg.Connection, user_id: str, name: str) -> int:
    """The dataset's id, creating it on first use (safe under concurrent first uses)."""
    row = conn.execute(
        """
        WITH created AS (
            INSERT INTO gb_datasets (user_id, name) VALUES (%(user)s, %(name)s)
            ON CONFLICT (user_id, name) DO NOTHING
            RETURNING id
        )
        SELECT id FROM created
        UNION ALL
        SELECT id FROM gb_datasets WHERE user_id = %(user)s AND name = %(name)s
        LIMIT 1
        """,
        {"user": user_id, "name": name},
    ).fetchone()
    return row["id"]


def delete(conn: psycopg.Connection, user_id: str, name: str) -> bool:
    """Delete the dataset; its artifacts, entities, edges, links and vectors go with it (cascades)."""
    row = conn.execute(
        "DELETE FROM gb_datasets WHERE user_id = %s AND name = %s RETURNING id", [user_id, name]
    ).fetchone()
    return row is not None
