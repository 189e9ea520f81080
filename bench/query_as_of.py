"""Retrieval as of a time (`as_of`) beside the live retrieval: our own time per question.

Retrieval as of a time (POST /v1/gb/query with `as_of`) beside the live retrieval, on the queried
dataset of a database `bench/query.py` built (build it first: `python bench/query.py --sizes 100k`).

The same questions (bench/query.py's probes of the large dataset) are timed through
`gligabao.memory.retrieval.retrieve` three ways: live (no as_of), as of the dataset's median
`valid_at` (about half its facts valid then) and as of its latest `valid_at` (all the facts that
were not yet ended). Providers answer instantly: the figures are our own retrieval time.

    python bench/query_as_of.py [--size 100k] [--dims 256] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="100k")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data-dir", default=str(ROOT / "var" / "bench-pgdata"))
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "bench"), str(ROOT / "tests")]
    import psycopg
    from query import (
        MEDIUM_EDGES,
        SMALL_DATASETS,
        SMALL_EDGES,
        DatasetPlan,
        database_url,
        percentile,
        probes,
        size_of,
    )

    from gligabao import bootstrap
    from gligabao.limits import DEFAULT_LIMITS
    from gligabao.memory.query import embedding_pool
    from gligabao.memory.retrieval import retrieve
    from gligabao.settings import Settings

    edges = size_of(args.size)
    name = f"gligabao_bench_{edges}_d{args.dims}"
    from bench_setup import bench_admin_url

    url = database_url(bench_admin_url(args.data_dir), name)
    plans = [DatasetPlan("bench-large", "main", edges), DatasetPlan("bench-medium", "main", MEDIUM_EDGES)]
    plans += [DatasetPlan(f"bench-small-{i}", "main", SMALL_EDGES) for i in range(SMALL_DATASETS)]
    with psycopg.connect(url) as conn:
        median, latest = conn.execute(
            """SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY g.valid_at), max(g.valid_at)
               FROM gb_edges g JOIN gb_datasets d ON d.id = g.dataset_id
               WHERE d.user_id = 'bench-large' AND d.name = 'main'"""
        ).fetchone()
    bootstrap.install(bootstrap.Bundle(Settings(database_url=url, embedding_dimensions=args.dims)))
    questions = [p for p in probes(url, plans, args.queries * 2, random.Random(edges)) if p.kind == "large"]
    questions = questions[: args.queries]

    def run(probe, as_of):
        with bootstrap.bundle().database.transaction(probe.user_id, probe.dataset) as uow:
            embedding = embedding_pool().submit(lambda: probe.vector)
            return retrieve(uow, probe.dataset, probe.question, embedding, DEFAULT_LIMITS, as_of=as_of)

    print(
        f"gligabao retrieval as of a time: database {name}, {len(questions)} questions on the large dataset"
    )
    for label, as_of in (
        ("live (no as_of)", None),
        (f"as_of {median:%Y-%m-%d %H:%M}", median),
        (f"as_of {latest:%Y-%m-%d %H:%M}", latest),
    ):
        for probe in questions[:20]:  # warm-up
            run(probe, as_of)
        times, context_edges = [], 0
        for probe in questions:
            started = time.perf_counter()
            context = run(probe, as_of)
            times.append((time.perf_counter() - started) * 1000)
            context_edges += len(context.edges)
        print(
            f"  {label}: p50 {percentile(times, 0.5):.1f} ms p95 {percentile(times, 0.95):.1f} ms "
            f"max {max(times):.1f} ms; {context_edges / len(questions):.0f} context edges a question"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
