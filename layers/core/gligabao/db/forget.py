"""The queries of forget: deleting an artifact, an entity or an edge of a user's dataset, and
what only it held.

A forget is two statements in one transaction: the first finds the row's dataset among the
user's and locks the dataset's row (the lock remember's store takes, so a forget and a store of
one dataset run one after the other, and each sees the other's rows whole); the second, run
after the lock with a fresh snapshot, deletes everything at once and counts it. Every statement
is filtered by the user's dataset, whatever row-level security does besides.

The rule every forget ends with: an entity stays while an artifact mentions it or an edge
touches it. Only the entities the forget touched are judged by it (the forgotten artifact's,
the deleted edges' endpoints), never the rest of the dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql
from psycopg.rows import class_row


@dataclass(frozen=True)
class ArtifactOwner:
    dataset_id: int
    parent_id: int | None  # set for a chunk: the text it is a part of
    chunk_index: int | None
    narrowed_to: str | None = None  # the dataset's name, which the transaction now names (NARROW)


@dataclass(frozen=True)
class DeletedRows:
    artifacts: int  # texts and images
    chunks: int
    entities: int
    edges: int
    found: bool  # the row named was still there under the lock (another forget may have won)
    kept_edges: list[int]  # edges that lost statements and stay (another artifact supports them)


# Found by a row's id, the dataset then narrows the rest of the transaction to itself: what follows
# (the deletions, the history derived again, a correction's writes) sees that dataset's rows only,
# and each policy reads one row of gb_datasets instead of every dataset of the user (migration
# 0047, db/connection.py). Set in the lock's own statement: no round trip more.
NARROW = "set_config('gligabao.dataset', d.name, true) AS narrowed_to"


def lock_dataset_of_artifact(
    conn: psycopg.Connection, user_id: str, artifact_id: int
) -> ArtifactOwner | None:
    """The dataset of the user's artifact, its row locked until the transaction ends; None when
    the user has no such artifact."""
    return (
        conn.cursor(row_factory=class_row(ArtifactOwner))
        .execute(
            f"""
        SELECT d.id AS dataset_id, a.parent_id, a.chunk_index, {NARROW}
        FROM gb_artifacts a
        JOIN gb_datasets d ON d.id = a.dataset_id
        WHERE a.id = %s AND d.user_id = %s
        FOR NO KEY UPDATE OF d
        """,
            [artifact_id, user_id],
        )
        .fetchone()
    )


def lock_dataset_of_entity(conn: psycopg.Connection, user_id: str, entity_id: int) -> int | None:
    return _lock_dataset_of(conn, "gb_entities", user_id, entity_id)


def lock_dataset_of_edge(conn: psycopg.Connection, user_id: str, edge_id: int) -> int | None:
    return _lock_dataset_of(conn, "gb_edges", user_id, edge_id)


def _lock_dataset_of(conn: psycopg.Connection, table: str, user_id: str, row_id: int) -> int | None:
    # The stores' own lock (`datasets.LOCK_OR_CREATE`): it conflicts with every store of the
    # dataset and not with the foreign-key checks (KEY SHARE) of other writers.
    row = conn.execute(
        sql.SQL(
            """
        SELECT d.id, {narrow}
        FROM {table} r
        JOIN gb_datasets d ON d.id = r.dataset_id
        WHERE r.id = %s AND d.user_id = %s
        FOR NO KEY UPDATE OF d
        """
        ).format(narrow=sql.SQL(NARROW), table=sql.Identifier(table)),
        [row_id, user_id],
    ).fetchone()
    return row["id"] if row else None


# The sets a statement works on (the forgotten artifacts, the edges they support, the entities
# touched) are arrays, each built once and looked up with `= ANY(...)`: the planner then walks the
# indexes from the few rows named, where joins on CTEs (whose sizes it cannot know) made it scan
# whole tables. (The cast makes the subquery one array value, not a set of rows to compare with.)

# An entity of `touched` that nothing holds any more: no artifact outside `forgotten` mentions
# it and no edge outside `deleted_edges` touches it (the statement's snapshot still sees the
# rows it deletes, hence the exclusions).
_NOTHING_HOLDS = """
    DELETE FROM gb_entities e
    WHERE e.id = ANY((SELECT ids FROM touched)::bigint[]) AND e.dataset_id = %(dataset_id)s
      AND NOT EXISTS (SELECT 1 FROM gb_entity_artifacts ea
                      WHERE ea.entity_id = e.id AND ea.artifact_id <> ALL((SELECT ids FROM forgotten)::bigint[]))
      AND NOT EXISTS (SELECT 1 FROM gb_edges g
                      WHERE (g.source_id = e.id OR g.target_id = e.id)
                        AND g.id NOT IN (SELECT id FROM deleted_edges))
    RETURNING e.id
"""

# Every statement ends with these CTEs: deleted_artifacts, deleted_entities, deleted_edges, and
# named, the row the caller named (empty when another forget deleted it first).
_COUNTS = """
SELECT (SELECT count(*) FROM deleted_artifacts WHERE kind <> 'chunk') AS artifacts,
       (SELECT count(*) FROM deleted_artifacts WHERE kind = 'chunk') AS chunks,
       (SELECT count(*) FROM deleted_entities) AS entities,
       (SELECT count(*) FROM deleted_edges) AS edges,
       EXISTS (SELECT 1 FROM named) AS found,
       (SELECT coalesce(array_agg(edge_id ORDER BY edge_id), '{}') FROM kept) AS kept_edges
"""

# Forgetting an entity or an edge deletes no artifact.
_NO_ARTIFACT = """
forgotten AS (SELECT '{}'::bigint[] AS ids),
deleted_artifacts AS (SELECT NULL::text AS kind WHERE false),
kept AS (SELECT NULL::bigint AS edge_id WHERE false),
"""

_DELETE_ARTIFACT = f"""
WITH forgotten AS (  -- the text (or image) and its chunks
    SELECT coalesce(array_agg(id), '{{}}') AS ids FROM gb_artifacts
    WHERE dataset_id = %(dataset_id)s
      AND ((id = %(artifact_id)s AND parent_id IS NULL) OR parent_id = %(artifact_id)s)
),
stated AS (  -- the edges they support: first stated by one of them, or linked to one
    SELECT coalesce(array_agg(DISTINCT id), '{{}}') AS ids FROM (
        SELECT id FROM gb_edges WHERE artifact_id = ANY((SELECT ids FROM forgotten)::bigint[])
        UNION ALL
        SELECT edge_id FROM gb_edge_artifacts WHERE artifact_id = ANY((SELECT ids FROM forgotten)::bigint[])
    ) AS supported
),
still_supported AS (  -- those another artifact supports too, with the first stored of those
    SELECT edge_id, min(artifact_id) AS first_id FROM (
        SELECT edge_id, artifact_id FROM gb_edge_artifacts WHERE edge_id = ANY((SELECT ids FROM stated)::bigint[])
        UNION ALL
        SELECT id, artifact_id FROM gb_edges WHERE id = ANY((SELECT ids FROM stated)::bigint[]) AND artifact_id IS NOT NULL
    ) AS support
    WHERE artifact_id <> ALL((SELECT ids FROM forgotten)::bigint[])
    GROUP BY edge_id
),
deleted_edges AS (  -- what only the forgotten artifacts supported
    DELETE FROM gb_edges
    WHERE id = ANY((SELECT ids FROM stated)::bigint[]) AND dataset_id = %(dataset_id)s
      AND id NOT IN (SELECT edge_id FROM still_supported)
    RETURNING id, source_id, target_id
),
repointed AS (  -- an edge that stays, first stated by a forgotten artifact, names another instead
    UPDATE gb_edges g
    SET artifact_id = s.first_id
    FROM still_supported s
    WHERE g.id = s.edge_id AND g.dataset_id = %(dataset_id)s
      AND g.artifact_id = ANY((SELECT ids FROM forgotten)::bigint[])
    RETURNING g.id
),
touched AS (  -- the entities the forgotten artifacts mention, and the deleted edges' endpoints
    SELECT coalesce(array_agg(DISTINCT id), '{{}}') AS ids FROM (
        SELECT entity_id AS id FROM gb_entity_artifacts WHERE artifact_id = ANY((SELECT ids FROM forgotten)::bigint[])
        UNION ALL SELECT source_id FROM deleted_edges
        UNION ALL SELECT target_id FROM deleted_edges
    ) AS mentioned
),
deleted_entities AS ({_NOTHING_HOLDS}),
deleted_artifacts AS (  -- their provenance links go with them (cascades)
    DELETE FROM gb_artifacts
    WHERE id = ANY((SELECT ids FROM forgotten)::bigint[])
    RETURNING id, kind
),
deleted_trajectories AS (  -- an eval remember's trajectory holds the text (its request)
    DELETE FROM gb_trajectories
    WHERE dataset_id = %(dataset_id)s AND kind = 'remember'
      AND trajectory -> 'extra' -> 'artifact_id' = to_jsonb(%(artifact_id)s::bigint)
),
named AS (SELECT id FROM deleted_artifacts WHERE id = %(artifact_id)s),
kept AS (SELECT edge_id FROM still_supported)
{_COUNTS}
"""

_DELETE_ENTITY = f"""
WITH {_NO_ARTIFACT}
deleted_edges AS (  -- live and superseded
    DELETE FROM gb_edges
    WHERE (source_id = %(entity_id)s OR target_id = %(entity_id)s) AND dataset_id = %(dataset_id)s
    RETURNING id, source_id, target_id
),
touched AS (  -- the entity's neighbours, which its edges may have been the only ones to hold
    SELECT coalesce(array_agg(DISTINCT id), '{{}}') AS ids FROM (
        SELECT source_id AS id FROM deleted_edges UNION ALL SELECT target_id FROM deleted_edges
    ) AS neighbour
    WHERE id <> %(entity_id)s
),
deleted_neighbours AS ({_NOTHING_HOLDS}),
named AS (DELETE FROM gb_entities WHERE id = %(entity_id)s AND dataset_id = %(dataset_id)s RETURNING id),
deleted_entities AS (SELECT id FROM named UNION ALL SELECT id FROM deleted_neighbours)
{_COUNTS}
"""

_DELETE_EDGE = f"""
WITH {_NO_ARTIFACT}
deleted_edges AS (
    DELETE FROM gb_edges WHERE id = %(edge_id)s AND dataset_id = %(dataset_id)s
    RETURNING id, source_id, target_id
),
touched AS (
    SELECT coalesce(array_agg(DISTINCT id), '{{}}') AS ids FROM (
        SELECT source_id AS id FROM deleted_edges UNION ALL SELECT target_id FROM deleted_edges
    ) AS endpoint
),
deleted_entities AS ({_NOTHING_HOLDS}),
named AS (SELECT id FROM deleted_edges)
{_COUNTS}
"""


def delete_artifact(conn: psycopg.Connection, dataset_id: int, artifact_id: int) -> DeletedRows:
    """Delete a text (or image) and its chunks, the edges only they support and the entities
    nothing else holds; an edge that stays loses its links to them, and when one of them first
    stated it, names instead the first stored (lowest id) of the artifacts that still support it."""
    return _deleted(conn, _DELETE_ARTIFACT, {"dataset_id": dataset_id, "artifact_id": artifact_id})


def delete_entity(conn: psycopg.Connection, dataset_id: int, entity_id: int) -> DeletedRows:
    """Delete an entity, every edge touching it (live and superseded), and the neighbours nothing
    else holds."""
    return _deleted(conn, _DELETE_ENTITY, {"dataset_id": dataset_id, "entity_id": entity_id})


def delete_edge(conn: psycopg.Connection, dataset_id: int, edge_id: int) -> DeletedRows:
    """Delete an edge, and its endpoints when nothing else holds them."""
    return _deleted(conn, _DELETE_EDGE, {"dataset_id": dataset_id, "edge_id": edge_id})


def _deleted(conn: psycopg.Connection, statement: str, parameters: dict) -> DeletedRows:
    # Links to the deleted rows (provenance, sessions, image rows) go by their foreign keys'
    # cascades, at the end of this same statement.
    return conn.cursor(row_factory=class_row(DeletedRows)).execute(statement, parameters).fetchone()
