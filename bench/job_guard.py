"""What the guard of a queued job costs around each model call: SQL round trips and milliseconds.

What the guard of a queued job costs (memory/job_guard.py): the SQL round trips and milliseconds
it adds around each attempt of a model call, the check that the job's text is still there, in a
transaction that holds its dataset's row while the attempt runs.

    .venv/bin/python bench/job_guard.py [--holds 2000]

A scratch database (dropped at the end) on DATABASE_URL's server, else on the embedded PostgreSQL
in var/bench-pgdata, with one queued text. The holds run through the memory core as a worker runs
them (gligabao_app, held by row-level security), each around an attempt that does nothing: what is
printed is the guard alone, to set beside a model call's hundreds of milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holds", type=int, default=2000, help="attempts guarded")
    args = parser.parse_args()
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")

    from bench_setup import bench_admin_url, scratch_database

    with scratch_database(bench_admin_url(), {}) as scratch:
        run_bench(scratch.bundle, scratch.owner_url, args.holds)


def run_bench(bundle, owner_url: str, holds: int) -> None:
    import psycopg
    from graph_rows import add_artifact, add_dataset
    from sql_counting import counting_round_trips

    from gligabao.memory.job_guard import guard_of

    with psycopg.connect(owner_url, autocommit=True) as conn:
        artifact = add_artifact(conn, add_dataset(conn, "u1"))
        conn.execute("UPDATE gb_artifacts SET status = 'pending' WHERE id = %s", [artifact])
    guard = guard_of(bundle, "u1", artifact)
    for _ in range(50):  # the connection, its prepared statements
        with guard.held():
            pass
    with counting_round_trips() as sql, guard.held():
        pass
    seconds = []
    for _ in range(holds):
        started = time.perf_counter()
        with guard.held():
            pass
        seconds.append(time.perf_counter() - started)
    ms = sorted(s * 1000 for s in seconds)
    print(
        f"job guard, {holds:,} attempts: {sql.count} SQL round trips each, "
        f"p50 {statistics.median(ms):.2f} ms, p95 {ms[int(len(ms) * 0.95)]:.2f} ms"
    )


if __name__ == "__main__":
    main()
