"""The graph export of GET /v1/gb/graph: a dataset's entities, then its edges, then its timeseries
(with their points and anchors), one page per statement.

Keyset pagination on indexes the dataset already has, so that a page costs the same at any
depth (no OFFSET, nothing held between pages) and rows written during an export never shift it:
* entities in the order of their normalized name, unique in the dataset and never changed
  (the `(dataset_id, normalized_name)` unique index);
* edges in the order the graph learned them, `(created_at, id)`, neither of which ever changes
  (`gb_edges_dataset`, `(dataset_id, created_at DESC)`, read backwards);
* series by id, each with all its points (a series is one row of a page, however many points).
Every row is filtered by the dataset in SQL (the caller's dataset id, looked up for its user).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg

from gligabao.db.series import ANCHORS
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
class GraphSeries:
    """A timeseries as the export writes it: its columns, its anchors (each `type`, `id`, `role`,
    `window_start`, `window_end`, `label`) and all its points in time order."""

    id: int
    key: str
    field: str
    name: str
    unit: str
    frequency: str
    source: str
    provider: str
    created_at: datetime
    updated_at: datetime
    anchors: list[dict[str, Any]]
    points: list[tuple[datetime, float]]


@dataclass(frozen=True)
class PageStart:
    """Where a page begins: after the entity named `after_name` (entities not done), after the
    edge (`after_created_at`, `after_id`) (entities done), or after the series `after_series_id`
    (entities and edges done)."""

    in_entities: bool = True
    after_name: str = ""
    after_created_at: datetime | None = None
    after_id: int = 0
    in_series: bool = False
    after_series_id: int = 0


@dataclass(frozen=True)
class PageRows:
    """At most `rows + 1` rows from the start: the page and, when there is more, one row beyond."""

    entities: list[GraphEntity]
    edges: list[StoredEdge]
    series: list[GraphSeries] = field(default_factory=list)


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
            AND NOT %(in_series)s
          ORDER BY created_at, id
          LIMIT %(rows)s + 1 - (SELECT count(*) FROM page_entities)) AS g
    JOIN gb_entities AS s ON s.id = g.source_id
    JOIN gb_entities AS t ON t.id = g.target_id
    ORDER BY g.created_at, g.id
"""

# The series fill what the entities and edges left (all of it once both are done), each with its
# anchors and every point.
_SERIES_SQL = f"""
    SELECT s.id, s.created_at, s.updated_at,
           jsonb_build_object('key', s.key, 'field', s.field, 'name', s.name, 'unit', s.unit,
                              'frequency', s.frequency, 'source', s.source, 'provider', s.provider,
                              'anchors', {ANCHORS}) AS series,
           pts.point_times, pts.point_values
    FROM (SELECT * FROM gb_series
          WHERE dataset_id = %(ds)s AND id > %(after_series_id)s
          ORDER BY id
          LIMIT %(rows)s + 1 - (SELECT count(*) FROM page_entities) - (SELECT count(*) FROM page_edges)) AS s
    LEFT JOIN LATERAL (
        SELECT coalesce(array_agg(p.at ORDER BY p.at), '{{}}') AS point_times,
               coalesce(array_agg(p.value ORDER BY p.at), '{{}}') AS point_values
        FROM gb_series_points p WHERE p.series_id = s.id
    ) AS pts ON true
    ORDER BY s.id
"""

# One result for the three kinds, entities first: the columns a kind has no use for are NULL.
_PAGE_SQL = f"""
    WITH page_entities AS MATERIALIZED ({_ENTITIES_SQL}),
    page_edges AS MATERIALIZED ({_EDGES_SQL}),
    page_series AS MATERIALIZED ({_SERIES_SQL})
    SELECT 'entity' AS kind, id, name, normalized_name, type, description, latitude, longitude,
           created_at, updated_at, NULL::bigint AS source_id, NULL::bigint AS target_id,
           NULL::text AS relation, NULL::bigint AS artifact_id, NULL::timestamptz AS valid_at,
           NULL::timestamptz AS invalid_at, NULL::timestamptz AS expired_at,
           NULL::text AS source, NULL::text AS target, model_id, NULL::jsonb AS series,
           NULL::timestamptz[] AS point_times, NULL::float8[] AS point_values
    FROM page_entities
    UNION ALL
    SELECT 'edge', id, NULL, NULL, NULL, description, NULL, NULL, created_at, NULL, source_id, target_id,
           relation, artifact_id, valid_at, invalid_at, expired_at, source, target, model_id, NULL, NULL, NULL
    FROM page_edges
    UNION ALL
    SELECT 'series', id, NULL, NULL, NULL, NULL, NULL, NULL, created_at, updated_at, NULL, NULL,
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, series, point_times, point_values
    FROM page_series
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
    """The rows of the dataset from `start`, entities then edges then series, at most `rows + 1` of
    them, in one round trip; the edges are the live ones unless `include_expired`."""
    parameters = {
        "ds": dataset_id,
        "in_entities": start.in_entities,
        "after_name": start.after_name,
        "after_created_at": start.after_created_at or BEFORE_EVERY_EDGE,
        "after_id": start.after_id,
        "rows": rows,
        "include_expired": include_expired,
        "in_series": start.in_series,
        "after_series_id": start.after_series_id,
    }
    page = PageRows([], [])
    for row in conn.execute(_PAGE_SQL, parameters):
        if row["kind"] == "series":
            page.series.append(_series(row))
        elif row["kind"] == "entity":
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


def _series(row: dict[str, Any]) -> GraphSeries:
    described = row["series"]
    return GraphSeries(
        id=row["id"],
        **{
            name: described[name]
            for name in ("key", "field", "name", "unit", "frequency", "source", "provider")
        },
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        anchors=described["anchors"],
        points=[
            (at, float(value)) for at, value in zip(row["point_times"], row["point_values"], strict=True)
        ],
    )
