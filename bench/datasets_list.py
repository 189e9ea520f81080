"""What `GET /v1/gb/datasets` costs a user whose dataset is large: its statement's time
(`db/datasets.py`, `list_with_counts`), with migration 0025's indexes and with them dropped, in
turns, median of --repeat, as the service runs it (the application role, row-level security).

It reads the query benchmark's database: build it first, with the texts an agent would have
remembered, e.g. `python bench/query.py --sizes 100k --dims 1536 --texts 300000`.

    python bench/datasets_list.py [--size 100k] [--dims 1536] [--repeat 9] [--data-dir var/bench-pgdata]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "bench"), str(ROOT / "tests")]

INDEXES = ["gb_edges_live_dataset", "gb_artifacts_unfinished"]  # migration 0025


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100k")
    parser.add_argument("--dims", type=int, default=1536)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument(
        "--data-dir",
        default=str(ROOT / "var" / "bench-pgdata"),
        help="embedded PostgreSQL of the benches (ignored when DATABASE_URL is set)",
    )
    args = parser.parse_args()

    import psycopg
    from bench_setup import bench_admin_url
    from query import database_url, service_url, size_of  # bench/query.py
    from remember import indexes_dropped  # bench/remember.py

    from gligabao.db.datasets import list_with_counts
    from gligabao.memory.datasets import DatasetSummary

    owner_url = database_url(
        bench_admin_url(args.data_dir), f"gligabao_bench_{size_of(args.size)}_d{args.dims}"
    )
    app_url = service_url(owner_url)  # applies the migrations the database lacks

    def listed() -> tuple[float, list]:
        with psycopg.connect(app_url) as conn, conn.transaction():
            conn.execute("SELECT set_config('gligabao.user_id', 'bench-large', true)")
            list_with_counts(conn, "bench-large", DatasetSummary)  # the first read warms the cache
            started = time.perf_counter()
            counts = list_with_counts(conn, "bench-large", DatasetSummary)
            return (time.perf_counter() - started) * 1000, counts

    times: dict[str, list[float]] = {"with the indexes": [], "without them": []}
    for _ in range(args.repeat):
        elapsed, counts = listed()
        times["with the indexes"].append(elapsed)
        with indexes_dropped(owner_url, INDEXES):
            times["without them"].append(listed()[0])
    [large] = counts
    print(
        f"datasets list of a user with {large.edges:,} live facts and {large.artifacts:,} artifacts "
        f"({large.entities:,} entities), median of {args.repeat}, in turns: "
        + ", ".join(f"{label} {statistics.median(t):.1f} ms" for label, t in times.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
