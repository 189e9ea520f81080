"""The queries that read memory back: a session's artifacts, entities and edges; one artifact with
its chunks and what it stated; one entity with its timeline.

Each is one statement. Every one reaches rows only through the user's dataset (a join on
`gb_datasets.user_id` in the SQL itself), so an id guessed by another user finds nothing. The
lists of a statement come back as jsonb arrays, decoded into the typed records of gligabao.model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from pydantic import TypeAdapter

from gligabao.db.jobs import JOB_ERROR, JOB_STATUS
from gligabao.model import (
    ArtifactHeader,
    ChunkHeader,
    EntityDetails,
    RecordedEdge,
    StoredArtifact,
    StoredEntity,
)

Record = TypeVar("Record")

# An edge as every read back writes it: its endpoints' names, what superseded it and the artifacts
# that stated it (the first one, `artifact_id`, included even when it has no provenance link).
EDGE_COLUMNS = """g.id, g.source_id, g.target_id, s.name AS source, t.name AS target, g.relation,
           g.description, g.artifact_id, g.valid_at, g.invalid_at, g.created_at, g.expired_at,
           g.superseded_by, g.model_id,
           ARRAY(SELECT l.artifact_id FROM gb_edge_artifacts l WHERE l.edge_id = g.id
                 UNION SELECT g.artifact_id WHERE g.artifact_id IS NOT NULL
                 ORDER BY 1) AS artifact_ids"""
EDGE_ENDS = "JOIN gb_entities s ON s.id = g.source_id JOIN gb_entities t ON t.id = g.target_id"

# Where an entity's timeline is: valid_at, an edge without one first, then id (migration 0005).
_TIMELINE_KEY = "coalesce(g.valid_at, '-infinity'::timestamptz)"
TIMELINE_START = "-infinity"  # the timeline key before every edge


@dataclass(frozen=True)
class SessionRows:
    artifacts: list[ArtifactHeader]
    entities: list[StoredEntity]
    edges: list[RecordedEdge]


def session_rows(
    conn: psycopg.Connection,
    *,
    user_id: str,
    dataset_id: int,
    session_id: str,
    after_artifact: int | None,
    after_entity: int | None,
    after_edge: int | None,
    take: int,
    preview_chars: int,
    kind: str | None = None,
) -> SessionRows:
    """Up to `take` of each list, by id after the given one (None: that list is done): the
    session's texts and images (only those of `kind`, an artifact kind or a memory kind, when
    given), and the entities and edges it touched (the link tables: already known ones included)."""
    row = conn.execute(
        f"""
        WITH dataset AS (
            SELECT id FROM gb_datasets WHERE id = %(dataset_id)s AND user_id = %(user_id)s
        ),
        artifact_page AS (
            SELECT a.id, a.kind, a.session_id, a.reference_time, a.created_at, {JOB_STATUS} AS status,
                   left(a.text, %(preview_chars)s) AS preview, length(a.text) AS chars,
                   (SELECT count(*) FROM gb_artifacts c WHERE c.parent_id = a.id) AS chunks,
                   a.memory_kind, a.metadata
            FROM gb_artifacts a
            WHERE a.dataset_id = (SELECT id FROM dataset) AND a.session_id = %(session_id)s
              AND a.kind <> 'chunk' AND a.id > %(after_artifact)s
              -- the two kinds' values are apart: text, image, facts; knowledge, episode
              AND (%(kind)s::text IS NULL OR %(kind)s IN (a.kind, a.memory_kind))
            ORDER BY a.id
            LIMIT %(take)s
        ),
        entity_page AS (
            SELECT e.id, e.name, e.type, e.description, e.model_id
            FROM gb_entity_sessions l
            JOIN gb_entities e ON e.id = l.entity_id
            WHERE l.session_id = %(session_id)s AND e.dataset_id = (SELECT id FROM dataset)
              AND e.id > %(after_entity)s
            ORDER BY e.id
            LIMIT %(take)s
        ),
        edge_page AS (
            SELECT {EDGE_COLUMNS}
            FROM gb_edge_sessions l
            JOIN gb_edges g ON g.id = l.edge_id
            {EDGE_ENDS}
            WHERE l.session_id = %(session_id)s AND g.dataset_id = (SELECT id FROM dataset)
              AND g.id > %(after_edge)s
            ORDER BY g.id
            LIMIT %(take)s
        )
        SELECT (SELECT coalesce(jsonb_agg(p ORDER BY p.id), '[]') FROM artifact_page p) AS artifacts,
               (SELECT coalesce(jsonb_agg(p ORDER BY p.id), '[]') FROM entity_page p) AS entities,
               (SELECT coalesce(jsonb_agg(p ORDER BY p.id), '[]') FROM edge_page p) AS edges
        """,
        {
            "user_id": user_id,
            "dataset_id": dataset_id,
            "session_id": session_id,
            # NULL matches nothing: a list the cursor says is done stays empty
            "after_artifact": after_artifact,
            "after_entity": after_entity,
            "after_edge": after_edge,
            "take": take,
            "preview_chars": preview_chars,
            "kind": kind,
        },
    ).fetchone()
    return SessionRows(
        records_of(ArtifactHeader, row["artifacts"]),
        records_of(StoredEntity, row["entities"]),
        records_of(RecordedEdge, row["edges"]),
    )


@dataclass(frozen=True)
class ArtifactRows:
    artifact: StoredArtifact
    chunks: list[ChunkHeader]
    entities: list[StoredEntity]
    edges: list[RecordedEdge]


def artifact_rows(conn: psycopg.Connection, *, user_id: str, artifact_id: int) -> ArtifactRows | None:
    """The user's artifact, its chunks, and the entities and edges whose provenance names it or,
    for a chunked text, one of its chunks (remember links what a chunk says to the chunk); None
    when the user has no such artifact."""
    row = conn.execute(
        f"""
        WITH artifact AS (
            SELECT a.id, a.dataset_id, d.name AS dataset, a.kind, a.text, a.session_id, a.parent_id,
                   a.chunk_index, a.summary, a.reference_time, a.created_at,
                   {JOB_STATUS} AS status, {JOB_ERROR} AS error, a.memory_kind,
                   a.metadata
            FROM gb_artifacts a
            JOIN gb_datasets d ON d.id = a.dataset_id
            WHERE a.id = %(artifact_id)s AND d.user_id = %(user_id)s
        ),
        chunk AS (
            SELECT c.id, c.chunk_index AS index, c.summary, length(c.text) AS chars
            FROM gb_artifacts c
            WHERE c.parent_id = (SELECT id FROM artifact) AND c.dataset_id = (SELECT dataset_id FROM artifact)
        ),
        piece AS (
            SELECT id FROM artifact UNION ALL SELECT id FROM chunk
        ),
        entity AS (
            SELECT DISTINCT e.id, e.name, e.type, e.description, e.model_id
            FROM gb_entity_artifacts l
            JOIN gb_entities e ON e.id = l.entity_id
            WHERE l.artifact_id IN (SELECT id FROM piece) AND e.dataset_id = (SELECT dataset_id FROM artifact)
        ),
        edge AS (
            SELECT {EDGE_COLUMNS}
            FROM gb_edges g
            {EDGE_ENDS}
            WHERE g.dataset_id = (SELECT dataset_id FROM artifact)
              AND g.id IN (SELECT l.edge_id FROM gb_edge_artifacts l WHERE l.artifact_id IN (SELECT id FROM piece)
                           UNION
                           SELECT f.id FROM gb_edges f WHERE f.artifact_id IN (SELECT id FROM piece))
        )
        SELECT a.id, a.dataset, a.kind, a.text, a.session_id, a.parent_id, a.chunk_index, a.summary,
               a.reference_time, a.created_at, a.status, a.error, a.memory_kind, a.metadata,
               (SELECT coalesce(jsonb_agg(p ORDER BY p.index), '[]') FROM chunk p) AS chunks,
               (SELECT coalesce(jsonb_agg(p ORDER BY p.id), '[]') FROM entity p) AS entities,
               (SELECT coalesce(jsonb_agg(p ORDER BY p.id), '[]') FROM edge p) AS edges
        FROM artifact a
        """,
        {"user_id": user_id, "artifact_id": artifact_id},
    ).fetchone()
    if row is None:
        return None
    lists = {name: row.pop(name) for name in ("chunks", "entities", "edges")}
    return ArtifactRows(
        StoredArtifact(**row),
        records_of(ChunkHeader, lists["chunks"]),
        records_of(StoredEntity, lists["entities"]),
        records_of(RecordedEdge, lists["edges"]),
    )


@dataclass(frozen=True)
class EntityRows:
    entity: EntityDetails
    edges: list[RecordedEdge]  # in the timeline's order


def entity_rows(
    conn: psycopg.Connection,
    *,
    user_id: str,
    entity_id: int,
    after_valid_at: str,
    after_id: int,
    take: int,
) -> EntityRows | None:
    """The user's entity and up to `take` edges touching it, live and superseded, after the
    timeline position (`after_valid_at`: RFC 3339 or TIMELINE_START, `after_id`); None when the
    user has no such entity. Each side (source, target) is one range scan of its timeline index;
    an edge from the entity to itself is taken on the source side only."""
    row = conn.execute(
        f"""
        WITH entity AS (
            SELECT e.id, e.dataset_id, d.name AS dataset, e.name, e.type, e.description, e.created_at,
                   e.updated_at, e.model_id,
                   ARRAY(SELECT l.session_id FROM gb_entity_sessions l WHERE l.entity_id = e.id
                         ORDER BY l.session_id) AS sessions
            FROM gb_entities e
            JOIN gb_datasets d ON d.id = e.dataset_id
            WHERE e.id = %(entity_id)s AND d.user_id = %(user_id)s
        ),
        touching AS (
            (SELECT g.id, {_TIMELINE_KEY} AS at
             FROM gb_edges g
             WHERE g.source_id = (SELECT id FROM entity)
               AND ({_TIMELINE_KEY}, g.id) > (%(after_valid_at)s::timestamptz, %(after_id)s)
             ORDER BY {_TIMELINE_KEY}, g.id
             LIMIT %(take)s)
            UNION ALL
            (SELECT g.id, {_TIMELINE_KEY} AS at
             FROM gb_edges g
             WHERE g.target_id = (SELECT id FROM entity) AND g.source_id <> g.target_id
               AND ({_TIMELINE_KEY}, g.id) > (%(after_valid_at)s::timestamptz, %(after_id)s)
             ORDER BY {_TIMELINE_KEY}, g.id
             LIMIT %(take)s)
        ),
        page AS (
            SELECT id, at FROM touching ORDER BY at, id LIMIT %(take)s
        ),
        edge AS (
            SELECT p.at, {EDGE_COLUMNS}
            FROM page p
            JOIN gb_edges g ON g.id = p.id
            {EDGE_ENDS}
            WHERE g.dataset_id = (SELECT dataset_id FROM entity)
        )
        SELECT e.id, e.dataset, e.name, e.type, e.description, e.created_at, e.updated_at, e.sessions,
               e.model_id,
               (SELECT coalesce(jsonb_agg(to_jsonb(p) - 'at' ORDER BY p.at, p.id), '[]') FROM edge p) AS edges
        FROM entity e
        """,
        {
            "user_id": user_id,
            "entity_id": entity_id,
            "after_valid_at": after_valid_at,
            "after_id": after_id,
            "take": take,
        },
    ).fetchone()
    if row is None:
        return None
    edges = row.pop("edges")
    return EntityRows(
        EntityDetails(**{**row, "sessions": tuple(row["sessions"])}), records_of(RecordedEdge, edges)
    )


def timeline_position(valid_at: datetime | None) -> str:
    """The timeline key of an edge, as `entity_rows` takes it."""
    return TIMELINE_START if valid_at is None else valid_at.isoformat()


def records_of(record: type[Record], rows: list[dict[str, Any]]) -> list[Record]:
    """jsonb rows as typed records (times from their RFC 3339 text, arrays as tuples)."""
    return _adapter(record).validate_python(rows)


@functools.cache
def _adapter(record: type) -> TypeAdapter:
    return TypeAdapter(list[record])
