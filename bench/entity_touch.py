"""What touching known entities costs the database, three ways (issue 16, point 3).

A remember that mentions known entities bumps their `updated_at`. With `updated_at` indexed in
gb_entities (the recent-entities window of the keyword statement), every touch is a non-HOT
update: a new row version, whose entry PostgreSQL inserts in every index of the table, the
entity's HNSW index included, although its vector did not change. This bench times touching 50
entities of a dataset (median of --repeat), on a scratch database with the real schema and
`--entities` entities with --dims vectors, as:

  hot       today's table: updated_at not indexed in gb_entities (its index in gb_entity_recency,
            migration 0009), half of each page free (migration 0010): HOT updates
  indexed   updated_at indexed in gb_entities, as before migration 0009
  no-vector the vectors in rows of their own: the touch is still non-HOT, but no HNSW entry

and prints the share of HOT updates PostgreSQL reports.

    python bench/entity_touch.py [--entities 20000] [--dims 1536] [--repeat 15]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--dims", type=int, default=1536)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--touched", type=int, default=50)
    args = parser.parse_args()

    import psycopg
    from bench_setup import bench_admin_url, scratch_database

    admin_url = bench_admin_url()
    with (
        scratch_database(admin_url, {"embedding_dimensions": args.dims}) as scratch,
        psycopg.connect(scratch.owner_url, autocommit=True) as conn,
    ):
        load(conn, args.entities, args.dims)
        print(
            f"entity touch: {args.touched} entities touched per statement, median of {args.repeat}, "
            f"{args.entities:,} entities with {args.dims}-dimension vectors in the dataset"
        )
        rng = random.Random(7)
        report(conn, "hot", touch_times(conn, rng, args))
        conn.execute("CREATE INDEX gb_entities_recent ON gb_entities (dataset_id, updated_at DESC)")
        report(conn, "indexed", touch_times(conn, rng, args))
        conn.execute("DROP INDEX gb_entities_recent")
        conn.execute("ALTER TABLE gb_entities DROP COLUMN embedding CASCADE")
        conn.execute("ALTER TABLE gb_entities SET (fillfactor = 100)")
        conn.execute("VACUUM FULL ANALYZE gb_entities")
        report(conn, "no-vector", touch_times(conn, rng, args))
    return 0


def load(conn, entities: int, dims: int) -> None:
    dataset = conn.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('bench', 'main') RETURNING id")
    conn.execute(
        f"""INSERT INTO gb_entities (dataset_id, name, normalized_name, type, description, embedding)
            SELECT %s, 'Entity ' || i, 'entity ' || i, 'person', 'an entity of the bench number ' || i,
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, {dims}) WHERE i > 0)::vector
            FROM generate_series(1, %s) AS i""",
        [dataset.fetchone()[0], entities],
    )
    conn.execute("VACUUM ANALYZE gb_entities")


def touch_times(conn, rng: random.Random, args) -> list[float]:
    ids = [row[0] for row in conn.execute("SELECT id FROM gb_entities").fetchall()]
    conn.execute("SELECT pg_stat_reset()")
    times = []
    for _ in range(args.repeat + 2):
        chosen = rng.sample(ids, args.touched)
        started = time.perf_counter()
        conn.execute("UPDATE gb_entities SET updated_at = now() WHERE id = ANY(%s)", [chosen])
        times.append((time.perf_counter() - started) * 1000)
    return times[2:]  # the first two warm the caches


def report(conn, label: str, times: list[float]) -> None:
    conn.execute("SELECT pg_stat_force_next_flush()")  # this session's counters, at its next commit
    updated, hot = conn.execute(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'gb_entities'"
    ).fetchone()
    print(
        f"  {label:10} median {statistics.median(times):6.1f} ms  p90 {sorted(times)[int(len(times) * 0.9)]:6.1f} ms"
        f"  HOT updates {hot}/{updated}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
