"""What erasing a user costs: milliseconds and SQL round trips of DELETE /v1/gb/users/{user_id}.

What erasing a user costs: milliseconds and SQL round trips of DELETE /v1/gb/users/{user_id}'s
transaction, for a user with --rows rows in every table, beside another user of the same size.

    .venv/bin/python bench/erase_user.py [--rows 10000]

A scratch database (dropped at the end) on DATABASE_URL's server, else on the embedded PostgreSQL
in var/bench-pgdata. Each user's rows are tests/graph_rows.py's `fill_every_table`: --rows texts
with a chunk each, images, entities and edges with their vectors, provenance and session links,
prepared texts, inferences, trajectories and idempotency records. The erasure runs through the
memory core as the route calls it (gligabao_app, held by row-level security).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000, help="rows of the user in each table")
    args = parser.parse_args()
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")

    from bench_setup import bench_admin_url, scratch_database

    with scratch_database(bench_admin_url(), {}) as scratch:
        run_bench(scratch.bundle, scratch.owner_url, args.rows)


def run_bench(bundle, owner_url: str, rows: int) -> None:
    import psycopg
    from graph_rows import fill_every_table
    from sql_counting import counting_round_trips

    from gligabao.memory.erasure import erase_user

    with psycopg.connect(owner_url, autocommit=True) as conn:
        started = time.perf_counter()
        fill_every_table(conn, rows)  # u1's
        conn.execute("UPDATE gb_datasets SET user_id = 'other' WHERE user_id = 'u1'")
        conn.execute("UPDATE gb_inferences SET user_id = 'other' WHERE user_id = 'u1'")
        conn.execute("UPDATE gb_idempotency_records SET user_id = 'other' WHERE user_id = 'u1'")
        fill_every_table(conn, rows)
        conn.execute("ANALYZE")
        edges = conn.execute("SELECT count(*) FROM gb_edges").fetchone()[0]
        print(
            f"built two users of {rows:,} rows a table ({edges:,} edges) in {time.perf_counter() - started:.0f} s"
        )
        erase_user(bundle, "warm-up")  # the connection and its plans
        started = time.perf_counter()
        with counting_round_trips() as sql:
            erased = erase_user(bundle, "u1")
        ms = (time.perf_counter() - started) * 1000
        left = conn.execute("SELECT count(*) FROM gb_edges").fetchone()[0]
    print(
        f"erased u1: {erased.datasets} dataset(s), {erased.inferences:,} inferences, "
        f"{erased.idempotency_records:,} idempotency records, {edges - left:,} edges with everything "
        f"else cascading, in {ms:,.0f} ms and {sql.count} SQL round trips"
    )


if __name__ == "__main__":
    main()
