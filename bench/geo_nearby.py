"""What one nearby search costs as the dataset grows, with migration 0007's index and without.

What one nearby search costs as the dataset grows: milliseconds of the radius statement of
query (db/geo.py) around random anchors, with the bounding-box index of migration 0007 and
without it.

    .venv/bin/python bench/geo_nearby.py [--sizes 10000,100000,1000000] [--searches 200] [--radius 50]

A scratch database (dropped at the end) on DATABASE_URL's server, else on the embedded PostgreSQL
in var/bench-pgdata, holds one dataset per size whose entities are spread uniformly over the
sphere (about 15 within 50 km of a point at 1M). Each search runs as the service does, as
gligabao_app in the user's transaction (row-level security). Anchors are random entities, plus
one on the date line and one 30 km from the North Pole.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

BUILD = """
WITH dataset AS (INSERT INTO gb_datasets (user_id, name) VALUES ('bench', %(name)s) RETURNING id)
INSERT INTO gb_entities (dataset_id, name, normalized_name, type, latitude, longitude)
SELECT dataset.id, 'Place ' || i, 'place ' || i, 'city',
       degrees(asin(2 * random() - 1)), 360 * random() - 180
FROM dataset, generate_series(1, %(size)s) AS i
RETURNING dataset_id
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--radius", type=float, default=50.0)
    args = parser.parse_args()
    from bench_setup import bench_admin_url, scratch_database

    admin_url = bench_admin_url()
    with scratch_database(admin_url, {}) as scratch:
        run(
            scratch.bundle,
            scratch.owner_url,
            [int(s) for s in args.sizes.split(",")],
            args.searches,
            args.radius,
        )


def run(bundle, owner_url: str, sizes: list[int], searches: int, radius: float) -> None:
    import psycopg

    from gligabao.db import geo as geo_rows
    from gligabao.geo.distance import bounding_box

    owner = psycopg.connect(owner_url, autocommit=True)
    rng = random.Random(7)
    print(f"radius {radius:g} km, {searches} searches per size, p50 / p95 ms, mean entities found")
    for size in sizes:
        name = f"geo{size}"
        dataset_id = owner.execute(BUILD, {"name": name, "size": size}).fetchone()[0]
        special = owner.execute(
            """INSERT INTO gb_entities (dataset_id, name, normalized_name, type, latitude, longitude)
               VALUES (%(ds)s, 'Date line', 'date line', 'place', -16.8, 179.99),
                      (%(ds)s, 'Near the pole', 'near the pole', 'place', 89.73, 45.0) RETURNING id""",
            {"ds": dataset_id},
        ).fetchall()
        owner.execute("ANALYZE gb_entities")
        ids = [
            row[0] for row in owner.execute("SELECT id FROM gb_entities WHERE dataset_id = %s", [dataset_id])
        ]
        anchors = [*(row[0] for row in special), *rng.sample(ids, searches - 2)]
        for label in ("with the index", "without it"):
            if label == "without it":
                owner.execute("DROP INDEX gb_entities_coordinates")
            times, found = [], []
            for anchor in anchors:
                with bundle.database.transaction("bench", name) as uow:
                    lat, lon = (
                        uow.conn.execute(
                            "SELECT latitude, longitude FROM gb_entities WHERE id = %s", [anchor]
                        )
                        .fetchone()
                        .values()
                    )
                    started = time.perf_counter()
                    rows = geo_rows.nearby(
                        uow.conn, dataset_id, [(anchor, bounding_box(lat, lon, radius))], radius, 25
                    )
                    times.append((time.perf_counter() - started) * 1000)
                    found.append(len(rows))
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            print(
                f"{size:>9,} entities {label:>15}: {statistics.median(times):7.2f} / {p95:7.2f} ms,"
                f" {statistics.mean(found):.1f} found"
            )
            if label == "without it":
                owner.execute(
                    "CREATE INDEX gb_entities_coordinates ON gb_entities (dataset_id, latitude, longitude)"
                    " WHERE latitude IS NOT NULL"
                )
    owner.close()


if __name__ == "__main__":
    main()
