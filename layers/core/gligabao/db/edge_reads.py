"""Facts as a resource: one edge with its provenance, and a dataset's edges in pages, filtered as
a search is (db/retrieval_filters.py). One statement each; row-level security and the user's own
datasets keep every other user's rows out (another user's id reads as none)."""

from __future__ import annotations

from typing import Any

import psycopg

from gligabao.db.readback import EDGE_COLUMNS, EDGE_ENDS
from gligabao.db.retrieval_filters import FILTERED_FACTS, RetrievalFilters

# An edge as a neighbour in the supersession chain: enough to follow it.
_LINKED_EDGE = """jsonb_build_object('id', x.id, 'relation', x.relation, 'description', x.description,
                                  'valid_at', x.valid_at, 'invalid_at', x.invalid_at,
                                  'created_at', x.created_at, 'expired_at', x.expired_at)"""


def edge_with_provenance(conn: psycopg.Connection, *, user_id: str, edge_id: int) -> dict[str, Any] | None:
    """The user's edge (`EDGE_COLUMNS` and its dataset's name), its artifacts (the one that first
    stated it and every one that restated it), its sessions, the edge that superseded it, the
    ones it superseded and its statements (what each text said of it, said first first); None when
    the user has no such edge."""
    return conn.execute(
        f"""
        WITH edge AS (
            SELECT {EDGE_COLUMNS}, d.name AS dataset, g.dataset_id
            FROM gb_edges g
            JOIN gb_datasets d ON d.id = g.dataset_id AND d.user_id = %(user_id)s
            {EDGE_ENDS}
            WHERE g.id = %(edge_id)s
        )
        SELECT e.*,
               (SELECT coalesce(jsonb_agg(jsonb_build_object(
                            'id', a.id, 'kind', a.kind, 'session_id', a.session_id, 'parent_id', a.parent_id,
                            'reference_time', a.reference_time, 'created_at', a.created_at,
                            'metadata', a.metadata) ORDER BY a.id), '[]')
                FROM gb_artifacts a WHERE a.id = ANY (e.artifact_ids) AND a.dataset_id = e.dataset_id)
                   AS artifacts,
               ARRAY(SELECT s.session_id FROM gb_edge_sessions s WHERE s.edge_id = e.id ORDER BY s.session_id)
                   AS sessions,
               (SELECT {_LINKED_EDGE} FROM gb_edges x
                WHERE x.id = e.superseded_by AND x.dataset_id = e.dataset_id) AS superseded_by_edge,
               (SELECT coalesce(jsonb_agg({_LINKED_EDGE} ORDER BY x.id), '[]') FROM gb_edges x
                WHERE x.superseded_by = e.id AND x.dataset_id = e.dataset_id) AS supersedes,
               (SELECT coalesce(jsonb_agg(jsonb_build_object(
                            'id', s.id, 'artifact_id', s.artifact_id, 'kind', s.kind, 'valid_at', s.valid_at,
                            'invalid_at', s.invalid_at, 'said_at', s.said_at, 'ends_at', s.ends_at,
                            'cut', s.cut, 'cut_by', s.cut_by) ORDER BY s.said_at, s.id), '[]')
                FROM gb_edge_statements s WHERE s.edge_id = e.id AND s.dataset_id = e.dataset_id) AS statements
        FROM edge e
        """,
        {"user_id": user_id, "edge_id": edge_id},
    ).fetchone()


def edge_page(
    conn: psycopg.Connection,
    *,
    user_id: str,
    dataset: str,
    after_id: int,
    take: int,
    filters: RetrievalFilters,
) -> list[dict[str, Any]] | None:
    """Up to `take` + 1 of the dataset's edges after `after_id`, by id, that `filters` lets through
    (live ones unless include_expired); None when the user has no such dataset. A row whose `id` is
    null says the dataset exists and nothing is left."""
    rows = conn.execute(
        f"""
        WITH dataset AS MATERIALIZED (
            SELECT id FROM gb_datasets WHERE user_id = %(user_id)s AND name = %(dataset)s
        )
        SELECT p.*
        FROM dataset AS ds
        LEFT JOIN LATERAL (
            SELECT {EDGE_COLUMNS}
            FROM gb_edges g
            {EDGE_ENDS}
            WHERE g.dataset_id = ds.id AND g.id > %(after_id)s AND {FILTERED_FACTS.on("g")}
            ORDER BY g.id
            LIMIT %(take)s + 1
        ) AS p ON true
        """,
        {"user_id": user_id, "dataset": dataset, "after_id": after_id, "take": take, **filters.parameters()},
    ).fetchall()
    if not rows:
        return None
    return [row for row in rows if row["id"] is not None]
