"""Arranging graph rows directly in the database, for tests of the read and delete paths."""

from __future__ import annotations

import psycopg


def add_dataset(conn: psycopg.Connection, user_id: str, name: str = "main") -> int:
    return conn.execute(
        "INSERT INTO gb_datasets (user_id, name) VALUES (%s, %s) RETURNING id", [user_id, name]
    ).fetchone()[0]


def add_artifact(
    conn: psycopg.Connection,
    dataset_id: int,
    text: str = "Alice works at Acme.",
    *,
    kind: str = "text",
    parent_id: int | None = None,
    chunk_index: int | None = None,
    session_id: str | None = None,
    embedding=None,
) -> int:
    return conn.execute(
        """INSERT INTO gb_artifacts (dataset_id, kind, text, parent_id, chunk_index, session_id, embedding)
           VALUES (%s, %s, %s, %s, %s, %s, %s::vector) RETURNING id""",
        [dataset_id, kind, text, parent_id, chunk_index, session_id, _vector(embedding)],
    ).fetchone()[0]


def add_entity(
    conn: psycopg.Connection, dataset_id: int, name: str, type_: str = "person", *, embedding=None
) -> int:
    return conn.execute(
        """INSERT INTO gb_entities (dataset_id, name, normalized_name, type, embedding)
           VALUES (%s, %s, %s, %s, %s::vector) RETURNING id""",
        [dataset_id, name, name.lower(), type_, _vector(embedding)],
    ).fetchone()[0]


def add_edge(
    conn: psycopg.Connection,
    dataset_id: int,
    source_id: int,
    target_id: int,
    relation: str,
    *,
    artifact_id: int | None = None,
    expired: bool = False,
    embedding=None,
) -> int:
    return conn.execute(
        """INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, artifact_id, expired_at, embedding)
           VALUES (%s, %s, %s, %s, %s, CASE WHEN %s THEN now() END, %s::vector) RETURNING id""",
        [dataset_id, source_id, target_id, relation, artifact_id, expired, _vector(embedding)],
    ).fetchone()[0]


def _vector(values) -> str | None:
    return None if values is None else "[" + ",".join(str(float(v)) for v in values) + "]"
