"""The SQL of geo (SPEC section 9): entities' coordinates, the places of a question, and the
entities within a radius of them.

The radius search never scans a dataset: each anchor's circle is narrowed to its bounding box
(one or two longitude ranges: across the date line two, around a pole every longitude), which
the index of migration 0007 on (dataset_id, latitude, longitude) reads as latitude ranges; the
haversine distance (R = 6371.0088 km) is then computed for the rows of the boxes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from gligabao.geo.distance import EARTH_RADIUS_KM, Box


@dataclass(frozen=True)
class PlaceRow:
    name: str
    normalized_name: str
    type: str
    latitude: float
    longitude: float


def set_coordinates(
    conn: psycopg.Connection, dataset_id: int, rows: Sequence[tuple[int, float, float]]
) -> None:
    """Give these entities (id, latitude, longitude) their coordinates; one statement."""
    if not rows:
        return
    conn.execute(
        """
        UPDATE gb_entities AS e SET latitude = c.latitude, longitude = c.longitude
        FROM unnest(%(id)s::bigint[], %(latitude)s::float8[], %(longitude)s::float8[]) AS c(id, latitude, longitude)
        WHERE e.id = c.id AND e.dataset_id = %(dataset_id)s
          AND (e.latitude IS DISTINCT FROM c.latitude OR e.longitude IS DISTINCT FROM c.longitude)
        """,
        {
            "dataset_id": dataset_id,
            "id": [row[0] for row in rows],
            "latitude": [row[1] for row in rows],
            "longitude": [row[2] for row in rows],
        },
    )


def anchors(
    conn: psycopg.Connection, dataset_id: int, places: Sequence[PlaceRow], matched_ids: Sequence[int]
) -> list[dict]:
    """Store the places of a question as entities with coordinates (an entity of the same name
    without coordinates gets them; one that has some keeps them), and return them with the
    matched entities that have coordinates: the anchors (id, name, type, description, latitude,
    longitude), the
    question's places first. One statement."""
    return conn.execute(
        """
        WITH input AS (
            SELECT * FROM unnest(%(name)s::text[], %(normalized_name)s::text[], %(type)s::text[],
                                 %(latitude)s::float8[], %(longitude)s::float8[])
                     WITH ORDINALITY AS i(name, normalized_name, type, latitude, longitude, ord)
        ),
        stored AS (
            INSERT INTO gb_entities AS e (dataset_id, name, normalized_name, type, latitude, longitude)
            SELECT %(dataset_id)s, name, normalized_name, type, latitude, longitude
            FROM input ORDER BY normalized_name
            ON CONFLICT (dataset_id, normalized_name) DO UPDATE
            SET latitude = coalesce(e.latitude, EXCLUDED.latitude),
                longitude = CASE WHEN e.latitude IS NULL THEN EXCLUDED.longitude ELSE e.longitude END
            RETURNING e.id, e.name, e.normalized_name, e.type, e.description, e.latitude, e.longitude
        ),
        found AS (
            SELECT s.id, s.name, s.type, s.description, s.latitude, s.longitude, 0 AS source, i.ord AS rank
            FROM stored AS s JOIN input AS i ON i.normalized_name = s.normalized_name
            UNION ALL
            SELECT e.id, e.name, e.type, e.description, e.latitude, e.longitude, 1, m.ord
            FROM unnest(%(matched)s::bigint[]) WITH ORDINALITY AS m(id, ord)
            JOIN gb_entities AS e ON e.id = m.id AND e.dataset_id = %(dataset_id)s AND e.latitude IS NOT NULL
        )
        SELECT id, name, type, description, latitude, longitude
        FROM (SELECT DISTINCT ON (id) id, name, type, description, latitude, longitude, source, rank FROM found
              ORDER BY id, source, rank) AS anchor
        ORDER BY source, rank
        """,
        {
            "dataset_id": dataset_id,
            "name": [p.name for p in places],
            "normalized_name": [p.normalized_name for p in places],
            "type": [p.type for p in places],
            "latitude": [p.latitude for p in places],
            "longitude": [p.longitude for p in places],
            "matched": list(matched_ids),
        },
    ).fetchall()


def nearby(
    conn: psycopg.Connection,
    dataset_id: int,
    boxes: Sequence[tuple[int, Box]],
    radius_km: float,
    limit: int,
) -> list[dict]:
    """The entities of the dataset with coordinates within `radius_km` of an anchor, each with
    its distance to the nearest anchor (`distance_km`, `anchor_id`), nearest first, at most
    `limit`; the anchors themselves are left out. `boxes`: (anchor id, its bounding box), the
    anchors' coordinates read from their rows."""
    rows = [(anchor_id, box, lon_range) for anchor_id, box in boxes for lon_range in box.longitude_ranges]
    return conn.execute(
        """
        WITH boxes AS (
            SELECT * FROM unnest(%(anchor)s::bigint[], %(lat_min)s::float8[], %(lat_max)s::float8[],
                                 %(lon_min)s::float8[], %(lon_max)s::float8[])
                     AS b(anchor_id, lat_min, lat_max, lon_min, lon_max)
        ),
        anchors AS MATERIALIZED (
            SELECT id, latitude, longitude FROM gb_entities
            WHERE id = ANY(%(anchor)s::bigint[]) AND dataset_id = %(dataset_id)s AND latitude IS NOT NULL
        ),
        within AS (
            SELECT DISTINCT ON (e.id) e.id, e.name, e.type, e.description, e.latitude, e.longitude,
                   a.id AS anchor_id, d.km AS distance_km
            FROM boxes AS b
            JOIN anchors AS a ON a.id = b.anchor_id
            CROSS JOIN LATERAL (
                SELECT id, name, type, description, latitude, longitude FROM gb_entities
                WHERE dataset_id = %(dataset_id)s
                  AND latitude BETWEEN b.lat_min AND b.lat_max AND longitude BETWEEN b.lon_min AND b.lon_max
            ) AS e
            CROSS JOIN LATERAL (
                SELECT 2 * %(earth_radius_km)s::float8 * asin(sqrt(least(1.0::float8,
                    sin(radians(e.latitude - a.latitude) / 2) ^ 2
                    + cos(radians(a.latitude)) * cos(radians(e.latitude))
                      * sin(radians(e.longitude - a.longitude) / 2) ^ 2))) AS km
            ) AS d
            WHERE d.km <= %(radius_km)s AND e.id <> ALL(%(anchor)s::bigint[])
            ORDER BY e.id, d.km, a.id
        )
        SELECT * FROM within ORDER BY distance_km, id LIMIT %(limit)s
        """,
        {
            "dataset_id": dataset_id,
            "anchor": [r[0] for r in rows],
            "lat_min": [r[1].latitude_min for r in rows],
            "lat_max": [r[1].latitude_max for r in rows],
            "lon_min": [r[2][0] for r in rows],
            "lon_max": [r[2][1] for r in rows],
            "radius_km": radius_km,
            "limit": limit,
            "earth_radius_km": EARTH_RADIUS_KM,
        },
    ).fetchall()
