"""Timeseries (migration 0046): a dataset's series, their points and their anchors.

Every statement names the dataset (its id, or the user's dataset looked up by name) and runs
under row-level security: another user's series, entity or artifact reads as none. A series'
statistics are computed here from its points whenever they are read (`_stats`), never stored.
Times come back as timestamptz (jsonb: ISO 8601 text), values as double precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

# --- SQL fragments of a series `s`: its statistics and its anchors ---------------------------------

# The points of series `s` that a read looks at: those in [from, to], both bounds included as the
# gligabao server includes them (each optional).
IN_RANGE = "p.at >= coalesce(%(from)s::timestamptz, '-infinity') AND p.at <= coalesce(%(to)s::timestamptz, 'infinity')"


def _stats(within: str = "true") -> str:
    """The statistics of the points of series `s` that `within` lets through (a condition on `p`),
    as one jsonb (NULL without a point): their count and mean, the first and the last point, the
    lowest and the highest value with the first time each is reached, and the largest move between
    two consecutive points (relative to the first of the two; none starts at 0).

    The mean and the moves are computed in numeric from each value's shortest exact text: double
    precision would overflow on extreme values (1e308 and -1e308) where the numeric sum does not.
    The mean stays numeric in the jsonb (a mean below the smallest double is read as 0, where
    PostgreSQL's cast would refuse it)."""
    points = f"FROM gb_series_points p WHERE p.series_id = s.id AND {within}"
    return f"""(
        SELECT CASE WHEN agg.count > 0 THEN jsonb_build_object(
                   'count', agg.count, 'mean', agg.mean,
                   'first_ts', f.at, 'first', f.value, 'last_ts', l.at, 'last', l.value,
                   'min_ts', lo.at, 'min', lo.value, 'max_ts', hi.at, 'max', hi.value,
                   'largest_move', mv.move) END
        FROM (SELECT count(*) AS count, avg(p.value::text::numeric) AS mean {points}) AS agg
        LEFT JOIN LATERAL (SELECT p.at, p.value {points} ORDER BY p.at LIMIT 1) AS f ON true
        LEFT JOIN LATERAL (SELECT p.at, p.value {points} ORDER BY p.at DESC LIMIT 1) AS l ON true
        LEFT JOIN LATERAL (SELECT p.at, p.value {points} ORDER BY p.value, p.at LIMIT 1) AS lo ON true
        LEFT JOIN LATERAL (SELECT p.at, p.value {points} ORDER BY p.value DESC, p.at LIMIT 1) AS hi ON true
        LEFT JOIN LATERAL (
            SELECT jsonb_build_object('start', m.prev_at, 'end', m.at,
                                      'from_value', m.prev_value, 'to_value', m.value) AS move
            FROM (SELECT p.at, p.value, lag(p.at) OVER (ORDER BY p.at) AS prev_at,
                         lag(p.value) OVER (ORDER BY p.at) AS prev_value {points}) AS m
            WHERE m.prev_value <> 0 AND m.value <> m.prev_value
            ORDER BY abs((m.value::text::numeric - m.prev_value::text::numeric) / m.prev_value::text::numeric) DESC,
                     m.at
            LIMIT 1
        ) AS mv ON true
    )"""


# Each anchor of series `s`, oldest first: what it is (entity, edge or artifact), its id, its role and
# window, and a label a reader knows it by (the entity's name, the fact's ends and relation).
ANCHORS = """(
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'type', CASE WHEN a.entity_id IS NOT NULL THEN 'entity'
                            WHEN a.edge_id IS NOT NULL THEN 'edge' ELSE 'artifact' END,
               'id', coalesce(a.entity_id, a.edge_id, a.artifact_id),
               'role', a.role, 'window_start', a.window_start, 'window_end', a.window_end,
               'label', coalesce(e.name, src.name || ' -' || g.relation || '-> ' || dst.name))
             ORDER BY a.id), '[]')
    FROM gb_series_anchors a
    LEFT JOIN gb_entities e ON e.id = a.entity_id
    LEFT JOIN gb_edges g ON g.id = a.edge_id
    LEFT JOIN gb_entities src ON src.id = g.source_id
    LEFT JOIN gb_entities dst ON dst.id = g.target_id
    WHERE a.series_id = s.id
)"""

SERIES_COLUMNS = f"""s.id, s.key, s.field, s.name, s.unit, s.frequency, s.source, s.provider, s.created_at, s.updated_at,
    {_stats()} AS stats, {ANCHORS} AS anchors"""


# --- writing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WantedAnchor:
    """An anchor to look up in the dataset: by id (`entity_id`, `edge_id`, `artifact_id`), or by
    selector (`entity`: `name` a normalized name, `type` a lowercase type or None; `edge`: `name`
    and `target` normalized names, `relation` as stored (snake_case) and `relation_given` as given)."""

    kind: str
    id: int | None = None
    name: str | None = None
    type: str | None = None
    relation: str | None = None
    relation_given: str | None = None
    target: str | None = None


_RESOLVE = """
SELECT w.n,
       CASE w.kind
           WHEN 'entity_id' THEN (SELECT e.id FROM gb_entities e WHERE e.id = w.id AND e.dataset_id = %(ds)s)
           WHEN 'edge_id' THEN (SELECT g.id FROM gb_edges g WHERE g.id = w.id AND g.dataset_id = %(ds)s)
           WHEN 'artifact_id' THEN (SELECT a.id FROM gb_artifacts a WHERE a.id = w.id AND a.dataset_id = %(ds)s)
           WHEN 'entity' THEN (
               SELECT e.id FROM gb_entities e
               WHERE e.dataset_id = %(ds)s AND e.normalized_name = w.name AND (w.type IS NULL OR lower(e.type) = w.type)
               ORDER BY e.id DESC LIMIT 1)
           WHEN 'edge' THEN (  -- a live fact, the newest of several
               SELECT g.id FROM gb_entities src
               JOIN gb_edges g ON g.source_id = src.id AND g.dataset_id = %(ds)s
               JOIN gb_entities dst ON dst.id = g.target_id
               WHERE src.dataset_id = %(ds)s AND src.normalized_name = w.name
                 AND dst.normalized_name = w.target AND g.relation IN (w.relation, w.relation_given)
                 AND g.expired_at IS NULL
               ORDER BY g.id DESC LIMIT 1)
       END AS found
FROM jsonb_to_recordset(%(wanted)s) AS w(n int, kind text, id bigint, name text, type text, relation text, relation_given text,
                                          target text)
ORDER BY w.n
"""


def resolve_anchors(
    conn: psycopg.Connection, dataset_id: int, wanted: Sequence[WantedAnchor]
) -> list[int | None]:
    """The id each wanted anchor names in the dataset, in order (None: no such row), in one statement."""
    if not wanted:
        return []
    rows = [{"n": n, **vars(anchor)} for n, anchor in enumerate(wanted)]
    found = conn.execute(_RESOLVE, {"ds": dataset_id, "wanted": Jsonb(rows)}).fetchall()
    return [row["found"] for row in found]


def lock_dataset(conn: psycopg.Connection, dataset_id: int) -> None:
    """Hold the dataset's row until the transaction ends, as remember and forget do: what the
    anchors name cannot be forgotten between their lookup and their writing."""
    conn.execute("SELECT id FROM gb_datasets WHERE id = %s FOR NO KEY UPDATE", [dataset_id])


@dataclass(frozen=True)
class AnchorRow:
    """A resolved anchor: exactly one of the three ids, its role ("" for none) and its window."""

    artifact_id: int | None = None
    entity_id: int | None = None
    edge_id: int | None = None
    role: str = ""
    window_start: datetime | None = None
    window_end: datetime | None = None


@dataclass(frozen=True)
class SeriesRow:
    """A series to write, known by (provider, key, field): `name`, `unit` and `frequency` None keep
    a stored series' own; `points` hold one value per time, `anchors` one per row they name."""

    key: str
    field: str
    provider: str  # "" for the caller's
    source: str  # supplied or fetched
    name: str | None
    unit: str | None
    frequency: str | None
    points: Sequence[tuple[datetime, float]]
    anchors: Sequence[AnchorRow]


_WRITE = """
WITH given AS (
    SELECT * FROM unnest(%(keys)s::text[], %(fields)s::text[], %(providers)s::text[], %(sources)s::text[],
                         %(names)s::text[], %(units)s::text[], %(frequencies)s::text[])
        WITH ORDINALITY AS g(key, field, provider, source, name, unit, frequency, n)
),
stored AS (  -- a series the dataset holds is the same series: its points and anchors are added
    INSERT INTO gb_series AS s (dataset_id, key, field, provider, source, name, unit, frequency)
    SELECT %(ds)s, g.key, g.field, g.provider, g.source, coalesce(g.name, ''), coalesce(g.unit, ''),
           coalesce(g.frequency, '')
    FROM given g
    ORDER BY g.n
    ON CONFLICT (dataset_id, provider, key, field) DO UPDATE
    SET name = coalesce((SELECT g.name FROM given g WHERE (g.provider, g.key, g.field)
                                                      = (excluded.provider, excluded.key, excluded.field)), s.name),
        unit = coalesce((SELECT g.unit FROM given g WHERE (g.provider, g.key, g.field)
                                                      = (excluded.provider, excluded.key, excluded.field)), s.unit),
        frequency = coalesce((SELECT g.frequency FROM given g WHERE (g.provider, g.key, g.field)
                                                      = (excluded.provider, excluded.key, excluded.field)), s.frequency),
        updated_at = now()
    RETURNING s.id, s.provider, s.key, s.field, (s.xmax = 0) AS created
),
ids AS (SELECT g.n, stored.id, stored.created FROM given g JOIN stored USING (provider, key, field)),
points AS (  -- a time the series holds takes the new value
    INSERT INTO gb_series_points AS p (series_id, dataset_id, at, value)
    SELECT ids.id, %(ds)s, v.at, v.value
    FROM unnest(%(point_series)s::bigint[], %(point_times)s::timestamptz[], %(point_values)s::float8[])
        AS v(n, at, value)
    JOIN ids ON ids.n = v.n
    ON CONFLICT (series_id, at) DO UPDATE SET value = excluded.value
),
anchors_given AS (
    SELECT * FROM unnest(%(anchor_series)s::bigint[], %(anchor_artifacts)s::bigint[],
                         %(anchor_entities)s::bigint[], %(anchor_edges)s::bigint[], %(anchor_roles)s::text[],
                         %(anchor_starts)s::timestamptz[], %(anchor_ends)s::timestamptz[])
        WITH ORDINALITY AS w(n, artifact_id, entity_id, edge_id, role, window_start, window_end, position)
),
anchors_kept AS (  -- an anchor the series has takes its new role and window (or none)
    UPDATE gb_series_anchors AS a
    SET role = w.role, window_start = w.window_start, window_end = w.window_end
    FROM anchors_given w JOIN ids ON ids.n = w.n
    WHERE a.series_id = ids.id AND a.dataset_id = %(ds)s
      AND (a.artifact_id = w.artifact_id OR a.entity_id = w.entity_id OR a.edge_id = w.edge_id)
),
anchors_added AS (  -- the others, in the order given (the kept ones conflict: left as updated)
    INSERT INTO gb_series_anchors (series_id, dataset_id, artifact_id, entity_id, edge_id, role, window_start, window_end)
    SELECT ids.id, %(ds)s, w.artifact_id, w.entity_id, w.edge_id, w.role, w.window_start, w.window_end
    FROM anchors_given w JOIN ids ON ids.n = w.n
    ORDER BY w.position
    ON CONFLICT DO NOTHING
)
SELECT n, id, created FROM ids ORDER BY n
"""


def write_series(
    conn: psycopg.Connection, dataset_id: int, series: Sequence[SeriesRow]
) -> list[dict[str, Any]]:
    """Upsert the series by (dataset, provider, key, field) with their points and anchors, in one
    statement; for each series in order, its `id` and whether it was `created` (else the dataset
    held it, and it took the new points). Each series once; each time and each anchored row once
    per series."""
    points = [(n, at, value) for n, row in enumerate(series, 1) for at, value in row.points]
    anchors = [(n, anchor) for n, row in enumerate(series, 1) for anchor in row.anchors]
    parameters: dict[str, Any] = {
        "ds": dataset_id,
        "keys": [row.key for row in series],
        "fields": [row.field for row in series],
        "providers": [row.provider for row in series],
        "sources": [row.source for row in series],
        "names": [row.name for row in series],
        "units": [row.unit for row in series],
        "frequencies": [row.frequency for row in series],
        "point_series": [n for n, _, _ in points],
        "point_times": [at for _, at, _ in points],
        "point_values": [value for _, _, value in points],
        "anchor_series": [n for n, _ in anchors],
        "anchor_artifacts": [anchor.artifact_id for _, anchor in anchors],
        "anchor_entities": [anchor.entity_id for _, anchor in anchors],
        "anchor_edges": [anchor.edge_id for _, anchor in anchors],
        "anchor_roles": [anchor.role for _, anchor in anchors],
        "anchor_starts": [anchor.window_start for _, anchor in anchors],
        "anchor_ends": [anchor.window_end for _, anchor in anchors],
    }
    return conn.execute(_WRITE, parameters).fetchall()


# --- reading ---------------------------------------------------------------------------------------


def series_by_ids(
    conn: psycopg.Connection, dataset_id: int, series_ids: Sequence[int]
) -> list[dict[str, Any]]:
    """The dataset's series of these ids (`SERIES_COLUMNS`), by id."""
    return conn.execute(
        f"SELECT {SERIES_COLUMNS} FROM gb_series s WHERE s.dataset_id = %(ds)s AND s.id = ANY(%(ids)s) ORDER BY s.id",
        {"ds": dataset_id, "ids": list(series_ids)},
    ).fetchall()


def series_page(
    conn: psycopg.Connection, *, user_id: str, dataset: str, after_id: int, take: int
) -> list[dict[str, Any]] | None:
    """Up to `take` + 1 of the dataset's series after `after_id`, by id, with their statistics and
    anchors; None when the user has no such dataset."""
    rows = conn.execute(
        f"""
        WITH dataset AS MATERIALIZED (
            SELECT id FROM gb_datasets WHERE user_id = %(user_id)s AND name = %(dataset)s
        )
        SELECT p.*
        FROM dataset AS ds
        LEFT JOIN LATERAL (
            SELECT {SERIES_COLUMNS} FROM gb_series s
            WHERE s.dataset_id = ds.id AND s.id > %(after_id)s
            ORDER BY s.id
            LIMIT %(take)s + 1
        ) AS p ON true
        """,
        {"user_id": user_id, "dataset": dataset, "after_id": after_id, "take": take},
    ).fetchall()
    if not rows:
        return None
    return [row for row in rows if row["id"] is not None]


def entity_series_page(
    conn: psycopg.Connection, *, user_id: str, entity_id: int, after_id: int, take: int
) -> tuple[str, list[dict[str, Any]]] | None:
    """The name of the entity's dataset and up to `take` + 1 of the series after `after_id`, by
    id, anchored to the entity or to one of its facts (either end, live or superseded); None when
    the user has no such entity."""
    rows = conn.execute(
        f"""
        WITH entity AS MATERIALIZED (
            SELECT e.id, e.dataset_id, d.name AS dataset FROM gb_entities e
            JOIN gb_datasets d ON d.id = e.dataset_id AND d.user_id = %(user_id)s
            WHERE e.id = %(entity_id)s
        ),
        anchored AS (
            SELECT a.series_id FROM gb_series_anchors a WHERE a.entity_id = (SELECT id FROM entity)
            UNION
            SELECT a.series_id FROM gb_edges g JOIN gb_series_anchors a ON a.edge_id = g.id
            WHERE g.source_id = (SELECT id FROM entity)
            UNION
            SELECT a.series_id FROM gb_edges g JOIN gb_series_anchors a ON a.edge_id = g.id
            WHERE g.target_id = (SELECT id FROM entity)
        )
        SELECT en.dataset, p.*
        FROM entity AS en
        LEFT JOIN LATERAL (
            SELECT {SERIES_COLUMNS} FROM gb_series s
            WHERE s.id IN (SELECT series_id FROM anchored) AND s.dataset_id = en.dataset_id
              AND s.id > %(after_id)s
            ORDER BY s.id
            LIMIT %(take)s + 1
        ) AS p ON true
        """,
        {"user_id": user_id, "entity_id": entity_id, "after_id": after_id, "take": take},
    ).fetchall()
    if not rows:
        return None
    return rows[0]["dataset"], [row for row in rows if row["id"] is not None]


def series_with_points(
    conn: psycopg.Connection,
    *,
    user_id: str,
    series_id: int,
    start: datetime | None,
    end: datetime | None,
    take: int,
) -> dict[str, Any] | None:
    """The user's series (`SERIES_COLUMNS` and its dataset's name), the first `take` + 1 of its
    points in [start, end) as two arrays (`point_times`, `point_values`), and the statistics of the points in
    that range (`range_stats`, NULL without a point); None when the user has no such series."""
    return conn.execute(
        f"""
        SELECT d.name AS dataset, {SERIES_COLUMNS}, {_stats(IN_RANGE)} AS range_stats,
               pts.point_times, pts.point_values
        FROM gb_series s
        JOIN gb_datasets d ON d.id = s.dataset_id AND d.user_id = %(user_id)s
        LEFT JOIN LATERAL (
            SELECT coalesce(array_agg(q.at ORDER BY q.at), '{{}}') AS point_times,
                   coalesce(array_agg(q.value ORDER BY q.at), '{{}}') AS point_values
            FROM (SELECT p.at, p.value FROM gb_series_points p
                  WHERE p.series_id = s.id AND {IN_RANGE} ORDER BY p.at LIMIT %(take)s + 1) AS q
        ) AS pts ON true
        WHERE s.id = %(series_id)s
        """,
        {"user_id": user_id, "series_id": series_id, "from": start, "to": end, "take": take},
    ).fetchone()


def series_for_context(
    conn: psycopg.Connection,
    dataset_id: int,
    entity_ids: Sequence[int],
    edge_ids: Sequence[int],
    max_series: int,
    latest_points: int,
) -> list[dict[str, Any]]:
    """At most `max_series` of the dataset's series anchored to one of these entities or edges,
    with their statistics, anchors and `latest_points` newest points (`point_times`, `point_values`,
    oldest first), in one statement. The ids come best first: a series anchored to an earlier one comes
    first, then the most recently updated."""
    if max_series <= 0 or not (entity_ids or edge_ids):
        return []
    return conn.execute(
        f"""
        WITH anchored AS (
            SELECT a.series_id,
                   min(coalesce(array_position(%(entities)s::bigint[], a.entity_id),
                                cardinality(%(entities)s::bigint[]) + array_position(%(edges)s::bigint[], a.edge_id)))
                       AS rank
            FROM gb_series_anchors a
            WHERE a.dataset_id = %(ds)s
              AND (a.entity_id = ANY(%(entities)s::bigint[]) OR a.edge_id = ANY(%(edges)s::bigint[]))
            GROUP BY a.series_id
        ),
        chosen AS MATERIALIZED (
            SELECT s.*, an.rank FROM anchored an
            JOIN gb_series s ON s.id = an.series_id AND s.dataset_id = %(ds)s
            ORDER BY an.rank, s.updated_at DESC, s.id DESC
            LIMIT %(max_series)s
        )
        SELECT {SERIES_COLUMNS}, latest.point_times, latest.point_values
        FROM chosen s
        LEFT JOIN LATERAL (
            SELECT coalesce(array_agg(q.at ORDER BY q.at), '{{}}') AS point_times,
                   coalesce(array_agg(q.value ORDER BY q.at), '{{}}') AS point_values
            FROM (SELECT p.at, p.value FROM gb_series_points p
                  WHERE p.series_id = s.id ORDER BY p.at DESC LIMIT %(latest)s) AS q
        ) AS latest ON true
        ORDER BY s.rank, s.updated_at DESC, s.id DESC
        """,
        {
            "ds": dataset_id,
            "entities": list(entity_ids),
            "edges": list(edge_ids),
            "max_series": max_series,
            "latest": latest_points,
        },
    ).fetchall()


def send_holds_series(conn: psycopg.Connection, user_id: str, dataset: str) -> psycopg.Cursor:
    """Whether the user's dataset holds a series, sent in pipeline mode ahead of the query's keyword
    statement (one more statement in its round trip, before the question's embedding is needed): a
    query reads the series of its context only then, so that a dataset without any pays no round
    trip for them."""
    return conn.execute(
        "SELECT EXISTS (SELECT 1 FROM gb_series s JOIN gb_datasets d ON d.id = s.dataset_id"
        " WHERE d.user_id = %s AND d.name = %s) AS holds",
        [user_id, dataset],
    )


def read_holds_series(cursor: psycopg.Cursor) -> bool:
    row = cursor.fetchone()
    return bool(row["holds"] if isinstance(row, dict) else row[0])
