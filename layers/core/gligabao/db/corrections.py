"""The reads of a correction by hand (memory/corrections.py): the fact corrected, as stored, and the
entity a new target names. The writes are remember's own: an artifact, an entity and provenance
links (db/graph_writes.py), the plan of the fact's history (db/fact_history.py).

Every statement is filtered by the user's dataset, whatever row-level security does besides.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from gligabao.model import StoredEdge


@dataclass(frozen=True)
class EdgeToCorrect:
    """A stored fact with what a correction needs of it: its dataset, endpoints and vector."""

    id: int
    dataset_id: int
    dataset: str  # its name
    source_id: int
    target_id: int
    source: str
    target: str
    relation: str
    description: str
    valid_at: datetime | None
    invalid_at: datetime | None
    expired_at: datetime | None
    embedding: list[float] | None  # the stored vector, kept when neither description nor target changes
    superseded_by: int | None = None


@dataclass(frozen=True)
class NamedEntity:
    id: int
    name: str


_EDGE = """
SELECT e.id, e.dataset_id, d.name AS dataset, e.source_id, e.target_id, s.name AS source, t.name AS target, e.relation,
       e.description, e.valid_at, e.invalid_at, e.expired_at, e.embedding::real[] AS embedding, e.superseded_by
FROM gb_edges e
JOIN gb_datasets d ON d.id = e.dataset_id
JOIN gb_entities s ON s.id = e.source_id
JOIN gb_entities t ON t.id = e.target_id
WHERE e.id = %(edge_id)s AND d.user_id = %(user_id)s
"""


def edge_to_correct(conn: psycopg.Connection, user_id: str, edge_id: int) -> EdgeToCorrect | None:
    """The user's edge as stored; None when the user has no such edge."""
    return (
        conn.cursor(row_factory=class_row(EdgeToCorrect))
        .execute(_EDGE, {"edge_id": edge_id, "user_id": user_id})
        .fetchone()
    )


def entity_by_id(conn: psycopg.Connection, dataset_id: int, entity_id: int) -> NamedEntity | None:
    return (
        conn.cursor(row_factory=class_row(NamedEntity))
        .execute(
            "SELECT id, name FROM gb_entities WHERE id = %s AND dataset_id = %s",
            [entity_id, dataset_id],
        )
        .fetchone()
    )


def entity_by_name(conn: psycopg.Connection, dataset_id: int, normalized_name: str) -> NamedEntity | None:
    return (
        conn.cursor(row_factory=class_row(NamedEntity))
        .execute(
            "SELECT id, name FROM gb_entities WHERE dataset_id = %s AND normalized_name = %s",
            [dataset_id, normalized_name],
        )
        .fetchone()
    )


def stored_edge(conn: psycopg.Connection, dataset_id: int, edge_id: int) -> StoredEdge:
    """The edge as a correction leaves it, with its endpoints' names."""
    return (
        conn.cursor(row_factory=class_row(StoredEdge))
        .execute(
            """
        SELECT e.id, e.source_id, e.target_id, s.name AS source, t.name AS target, e.relation,
               e.description, e.artifact_id, e.valid_at, e.invalid_at, e.created_at, e.expired_at, e.model_id
        FROM gb_edges e
        JOIN gb_entities s ON s.id = e.source_id
        JOIN gb_entities t ON t.id = e.target_id
        WHERE e.id = %s AND e.dataset_id = %s
        """,
            [edge_id, dataset_id],
        )
        .fetchone()
    )
