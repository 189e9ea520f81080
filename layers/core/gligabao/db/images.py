"""The queries of image remember: an image the dataset already holds (by its sha256), what its
first remember stored, and the image's own row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from gligabao.model import StoredEdge, StoredEntity


@dataclass(frozen=True)
class StoredImage:
    """An image of the dataset: the artifact its first remember stored, and that remember's session."""

    artifact_id: int
    session_id: str | None
    extraction: dict[str, Any]
    created_at: datetime  # its artifact's
    reference_time: datetime  # when it was captured, as its first remember said (default: then)
    entities: list[StoredEntity]
    edges: list[StoredEdge]


def find_image(conn: psycopg.Connection, dataset_id: int, sha256: str) -> StoredImage | None:
    """The dataset's image with this sha256, with the entities and the live facts its artifact
    stated (provenance links); None when the dataset does not hold it."""
    row = conn.execute(
        """
        SELECT i.artifact_id, i.session_id, i.extraction, a.created_at,
               coalesce(a.reference_time, a.created_at) AS reference_time
        FROM gb_image_artifacts i JOIN gb_artifacts a ON a.id = i.artifact_id
        WHERE i.dataset_id = %(dataset_id)s AND i.sha256 = %(sha256)s
        """,
        {"dataset_id": dataset_id, "sha256": sha256},
    ).fetchone()
    if row is None:
        return None
    found = {"dataset_id": dataset_id, "artifact_id": row["artifact_id"]}
    entities = (
        conn.cursor(row_factory=class_row(StoredEntity))
        .execute(
            """
            SELECT e.id, e.name, e.type, e.description, e.model_id
            FROM gb_entity_artifacts l JOIN gb_entities e ON e.id = l.entity_id
            WHERE l.artifact_id = %(artifact_id)s AND e.dataset_id = %(dataset_id)s
            ORDER BY e.id
            """,
            found,
        )
        .fetchall()
    )
    edges = (
        conn.cursor(row_factory=class_row(StoredEdge))
        .execute(
            """
            SELECT g.id, g.source_id, g.target_id, g.relation, g.description, g.artifact_id, g.valid_at,
                   g.invalid_at, g.created_at, g.expired_at, s.name AS source, t.name AS target, g.model_id
            FROM gb_edge_artifacts l
            JOIN gb_edges g ON g.id = l.edge_id
            JOIN gb_entities s ON s.id = g.source_id
            JOIN gb_entities t ON t.id = g.target_id
            WHERE l.artifact_id = %(artifact_id)s AND g.dataset_id = %(dataset_id)s AND g.expired_at IS NULL
            ORDER BY g.id
            """,
            found,
        )
        .fetchall()
    )
    return StoredImage(
        row["artifact_id"],
        row["session_id"],
        row["extraction"],
        row["created_at"],
        row["reference_time"],
        entities,
        edges,
    )


def insert_image(
    conn: psycopg.Connection,
    dataset_id: int,
    *,
    artifact_id: int,
    sha256: str,
    media_type: str,
    size: int,
    extraction: dict[str, Any],
    session_id: str | None,
) -> None:
    conn.execute(
        """
        INSERT INTO gb_image_artifacts (dataset_id, artifact_id, sha256, media_type, bytes, extraction,
                                        session_id)
        VALUES (%s, %s, %s, %s, %s, %s, %s)
        """,
        (dataset_id, artifact_id, sha256, media_type, size, Jsonb(extraction), session_id),
    )
