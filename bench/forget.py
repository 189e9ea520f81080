"""What one forget costs in a large dataset (a text, an entity, an edge), with and without indexes.

What one forget costs: milliseconds and SQL round trips of forgetting a text, an entity and an
edge in a large dataset, with the indexes the deletes' cascades use and without them.

    .venv/bin/python bench/forget.py [--edges 100000] [--forgets 50]

A scratch database (dropped at the end) on DATABASE_URL's server, else on the embedded PostgreSQL
in var/bench-pgdata, holds one dataset built in SQL the way remember links its rows: --edges
edges among edges/4 entities, each text stating two edges and mentioning their endpoints, one
edge in five restated by a second text, one in twenty superseded. No vectors: a DELETE does not
touch the vector indexes (their entries are vacuumed later), so they change nothing here.

Each kind is forgotten --forgets times (distinct random rows) through the memory core, as the
route calls it; then the indexes are dropped and it is done again on other rows. Last, a dataset
of a twentieth of the size is deleted, with and without them.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

WARM_UP = 5
# What the cascades of a deleted entity (its edges, by either end: the timeline indexes of 0005)
# and of a deleted artifact (its image row: 0006) look up.
CASCADE_INDEXES = ("gb_edges_source_timeline", "gb_edges_target_timeline", "gb_image_artifacts_artifact")
ENDPOINT_INDEXES = {
    "gb_edges_source_timeline": "gb_edges (source_id, (coalesce(valid_at, '-infinity'::timestamptz)), id)",
    "gb_edges_target_timeline": "gb_edges (target_id, (coalesce(valid_at, '-infinity'::timestamptz)), id)",
}

BUILD = """
WITH dataset AS (INSERT INTO gb_datasets (user_id, name) VALUES ('bench', %(name)s) RETURNING id),
texts AS (
    INSERT INTO gb_artifacts (dataset_id, kind, text)
    SELECT dataset.id, 'text', 'text ' || i FROM dataset, generate_series(1, %(edges)s / 2) AS i
    RETURNING id
),
entities AS (
    INSERT INTO gb_entities (dataset_id, name, normalized_name, type)
    SELECT dataset.id, 'Entity ' || i, 'entity ' || i, 'person' FROM dataset, generate_series(1, %(edges)s / 4) AS i
    RETURNING id
)
SELECT (SELECT id FROM dataset) AS dataset_id, (SELECT min(id) FROM texts) AS first_text,
       (SELECT min(id) FROM entities) AS first_entity
"""

EDGES = """
INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, artifact_id, expired_at)
SELECT %(dataset_id)s,
       %(first_entity)s + (i * 7919) %% (%(edges)s / 4),
       %(first_entity)s + (i * 104729 + 1) %% (%(edges)s / 4),
       'knows',
       %(first_text)s + i / 2,
       CASE WHEN i %% 20 = 0 THEN now() END
FROM generate_series(0::bigint, %(edges)s - 1) AS i
"""

LINKS = """
WITH edge AS (
    SELECT id, source_id, target_id, artifact_id,
           row_number() OVER (ORDER BY id) AS n
    FROM gb_edges WHERE dataset_id = %(dataset_id)s
),
support AS (
    SELECT id, source_id, target_id, artifact_id FROM edge
    UNION ALL  -- one edge in five restated by another text
    SELECT id, source_id, target_id, %(first_text)s + (n * 31) %% (%(edges)s / 2) FROM edge WHERE n %% 5 = 0
),
edge_links AS (
    INSERT INTO gb_edge_artifacts SELECT id, artifact_id FROM support ON CONFLICT DO NOTHING
)
INSERT INTO gb_entity_artifacts
SELECT source_id, artifact_id FROM support UNION SELECT target_id, artifact_id FROM support
ON CONFLICT DO NOTHING
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--forgets", type=int, default=50, help="forgets of each kind per figure")
    args = parser.parse_args()
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")

    from bench_setup import bench_admin_url, scratch_database

    admin_url = bench_admin_url()
    with scratch_database(admin_url, {}) as scratch:
        run_bench(scratch.bundle, scratch.owner_url, args.edges, args.forgets)


def build(conn, name: str, edges: int) -> dict:
    started = time.perf_counter()
    ids = conn.execute(BUILD, {"name": name, "edges": edges}).fetchone()
    parameters = {**ids, "edges": edges}
    conn.execute(EDGES, parameters)
    conn.execute(LINKS, parameters)
    conn.execute("ANALYZE")
    print(f"built {name}: {edges:,} edges in {time.perf_counter() - started:.0f} s")
    return parameters


def run_bench(bundle, owner_url: str, edges: int, forgets: int) -> None:
    """The forgets run as the service does (the bundle: gligabao_app, held by row-level security);
    the rows are built and the indexes dropped on a connection of the tables' owner."""
    import psycopg
    from psycopg.rows import dict_row
    from sql_counting import counting_round_trips

    from gligabao.memory.forget import forget_artifact, forget_edge, forget_entity

    conn = psycopg.connect(owner_url, autocommit=True, row_factory=dict_row)
    big = build(conn, "big", edges)
    small = build(conn, "small", edges // 20)
    texts = _shuffled(conn, "SELECT id FROM gb_artifacts WHERE dataset_id = %s", big["dataset_id"])
    entities = _shuffled(conn, "SELECT id FROM gb_entities WHERE dataset_id = %s", big["dataset_id"])
    edge_ids = _shuffled(conn, "SELECT id FROM gb_edges WHERE dataset_id = %s", big["dataset_id"])
    kinds = (
        ("text", forget_artifact, texts),
        ("entity", forget_entity, entities),
        ("edge", forget_edge, edge_ids),
    )

    for _, forget, pool in kinds:  # warm-up: connection, statement plans, caches
        for _ in range(WARM_UP):
            _timed(forget, bundle, pool.pop())
    print(f"\nforget in a dataset of {edges:,} edges: {forgets} of each kind, ms\n")
    header = f"{'forget':<8} {'indexes':<9} {'p50':>7} {'p95':>7} {'max':>7} {'SQL trips':>9} {'rows deleted (mean)':>20}"
    print(header)
    print("-" * len(header))
    for with_indexes in (True, False):
        if not with_indexes:
            for index in CASCADE_INDEXES:
                conn.execute(f"DROP INDEX IF EXISTS {index}")
        for kind, forget, pool in kinds:
            times, trips, deleted = [], set(), []
            for _ in range(forgets):
                with counting_round_trips() as sql:
                    result, ms = _timed(forget, bundle, pool.pop())
                if result is None:
                    continue
                times.append(ms)
                trips.add(sql.count)
                deleted.append(result.artifacts + result.chunks + result.entities + result.edges)
            times.sort()
            print(
                f"{kind:<8} {'yes' if with_indexes else 'no':<9} {statistics.median(times):>7.2f} "
                f"{times[int(len(times) * 0.95) - 1]:>7.2f} {times[-1]:>7.2f} "
                f"{'/'.join(map(str, sorted(trips))):>9} {statistics.mean(deleted):>20.1f}"
            )
    started = time.perf_counter()
    _delete_dataset(bundle, small["dataset_id"])
    without = (time.perf_counter() - started) * 1000
    for index, definition in ENDPOINT_INDEXES.items():
        conn.execute(f"CREATE INDEX {index} ON {definition}")
    again = build(conn, "small-again", edges // 20)
    started = time.perf_counter()
    _delete_dataset(bundle, again["dataset_id"])
    with_them = (time.perf_counter() - started) * 1000
    print(
        f"\nDELETE /v1/gb/datasets of {edges // 20:,} edges (next to {edges:,}): "
        f"{with_them:,.0f} ms with the edge endpoint indexes, {without:,.0f} ms without"
    )
    print("\nSQL trips: BEGIN with the user, the lock of the row's dataset, the delete, COMMIT.")
    conn.close()


def _delete_dataset(bundle, dataset_id: int) -> None:
    with bundle.database.transaction("bench") as uow:
        uow.conn.execute("DELETE FROM gb_datasets WHERE id = %s", [dataset_id])


def _timed(forget, bundle, row_id: int):
    """(what was forgotten, ms), or (None, ms) when an entity forget already took this edge."""
    from gligabao.errors import NotFound

    started = time.perf_counter()
    try:
        result = forget(bundle, "bench", row_id)
    except NotFound:
        result = None
    return result, (time.perf_counter() - started) * 1000


def _shuffled(conn, query: str, dataset_id: int) -> list[int]:
    ids = [row["id"] for row in conn.execute(query, [dataset_id])]
    random.Random(7).shuffle(ids)
    return ids


if __name__ == "__main__":
    main()
