"""The graph export of GET /v1/gb/graph: a dataset's entities, then its edges, one page per statement.

Keyset pagination on indexes the dataset already has, so that a page costs the same at any
depth (no OFFSET, nothing held between pages) and rows written during an export never shift it:
* entities in the order of their normalized name, unique in the dataset and never changed
  (the `(dataset_id, normalized_name)` unique index);
* edges in the order the graph learned them, `(created_at, id)`, neither of which ever changes
  (`gb_edges_dataset`, `(dataset_id, created_at DESC)`, read backwards).
Every row is filtered by the dataset in SQL (the caller's dataset id, looked up for its user).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import psycopg

from gligabao.model import StoredEdge

# Before every edge: where an edge walk starts (no time the API reads or writes is earlier).
BEFORE_EVERY_EDGE = datetime(1, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class GraphEntity:
    """An entity as the export writes it: every column but its vector."""

    id: int
    name: str
    normalized_name: str  # the entities' order (and the cursor's position in it)
    type: str
    description: str
    latitude: float | None
    longitude: float | None
    created_at: datetime
    updated_at: datetime
    model_id: str | None = None  # the model that extracted it


@dataclass(frozen=True)
class PageStart:
    """Where a page begins: after the entity named `after_name` (entities not done), or after the
    edge (`after_created_at`, `after_id`) (entities done)."""

    in_entities: bool = True
    after_name: str = ""
    after_created_at: datetime | None = None
    after_id: int = 0


@dataclass(frozen=True)
class PageRows:
    """At most `rows + 1` rows from the start: the page and, when there is more, one row beyond."""

    entities: list[GraphEntity]
    edges: list[StoredEdge]


_ENTITIES_SQL = """
    SELECT id, name, normalized_name, type, description, latitude, longitude, created_at, updated_at,
           model_id
    FROM gb_entities
    WHERE dataset_id = %(ds)s AND %(in_entities)s AND normalized_name > %(after_name)s
    ORDER BY normalized_name
    LIMIT %(rows)s + 1
"""

# The edges fill what the entities left of the page (all of it once the entities are done).
# `created_at >= t` is the index's range; the second condition skips the rows of the last page.
_EDGES_SQL = """
    SELECT g.id, g.source_id, g.target_id, g.relation, g.description, g.artifact_id,
           g.valid_at, g.invalid_at, g.created_at, g.expired_at, s.name AS source, t.name AS target,
           g.model_id
    FROM (SELECT id, source_id, target_id, relation, description, artifact_id,
                 valid_at, invalid_at, created_at, expired_at, model_id
          FROM gb_edges
          WHERE dataset_id = %(ds)s
            AND created_at >= %(after_created_at)s
            AND (created_at > %(after_created_at)s OR id > %(after_id)s)
            AND (%(include_expired)s OR expired_at IS NULL)
          ORDER BY created_at, id
          LIMIT %(rows)s + 1 - (SELECT count(*) FROM page_entities)) AS g
    JOIN gb_entities AS s ON s.id = g.source_id
    JOIN gb_entities AS t ON t.id = g.target_id
    ORDER BY g.created_at, g.id
"""

# One result for both kinds, entities first: the columns a kind has no use for are NULL.
_PAGE_SQL = f"""
    WITH page_entities AS MATERIALIZED ({_ENTITIES_SQL}),
    page_edges AS MATERIALIZED ({_EDGES_SQL})
    SELECT 'entity' AS kind, id, name, normalized_name, type, description, latitude, longitude,
           created_at, updated_at, NULL::bigint AS source_id, NULL::bigint AS target_id,
           NULL::text AS relation, NULL::bigint AS artifact_id, NULL::timestamptz AS valid_at,
           NULL::timestamptz AS invalid_at, NULL::timestamptz AS expired_at,
           NULL::text AS source, NULL::text AS target, model_id
    FROM page_entities
    UNION ALL
    SELECT 'edge', id, NULL, NULL, NULL, description, NULL, NULL, created_at, NULL, source_id, target_id,
           relation, artifact_id, valid_at, invalid_at, expired_at, source, target, model_id
    FROM page_edges
"""

_ENTITY_COLUMNS = (
    "id",
    "name",
    "normalized_name",
    "type",
    "description",
    "latitude",
    "longitude",
    "model_id",
)
_EDGE_COLUMNS = (
    "id",
    "source_id",
    "target_id",
    "relation",
    "description",
    "artifact_id",
    "valid_at",
    "invalid_at",
    "created_at",
    "expired_at",
    "source",
    "target",
    "model_id",
)


def page_rows(
    conn: psycopg.Connection, *, dataset_id: int, start: PageStart, rows: int, include_expired: bool
) -> PageRows:
    """The rows of the dataset from `start`, entities then edges, at most `rows + 1` of them, in
    one round trip; the edges are the live ones unless `include_expired`."""
    parameters = {
        "ds": dataset_id,
        "in_entities": start.in_entities,
        "after_name": start.after_name,
        "after_created_at": start.after_created_at or BEFORE_EVERY_EDGE,
        "after_id": start.after_id,
        "rows": rows,
        "include_expired": include_expired,
    }
    page = PageRows([], [])
    for row in conn.execute(_PAGE_SQL, parameters):
        if row["kind"] == "entity":
            page.entities.append(
                GraphEntity(
                    **{name: row[name] for name in _ENTITY_COLUMNS},
                    created_at=row["created_at"],
                    updated_at=row["updated_at"],
                )
            )
        else:
            page.edges.append(StoredEdge(**{name: row[name] for name in _EDGE_COLUMNS}))
    return page
