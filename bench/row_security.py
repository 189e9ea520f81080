"""What row-level security costs: retrievals and remembers as the tables' owner and as gligabao_app.

What row-level security costs: the same retrievals and remembers, run alternately as the tables'
owner (the policies do not apply to it) and as gligabao_app (the service's role, held by them),
so that both see the same load on the machine.

    .venv/bin/python bench/row_security.py [--queries 200] [--repeat 5]

Retrieval: the questions of bench/query.py on its 10k-edge database (built the first time, kept in
var/bench-pgdata). Remember: the remembers of bench/remember.py (1, 10 and 50 facts) in a scratch
database, with the fake providers answering instantly. Medians (and p95 for retrieval) per role.

Then, with --datasets (0: none), a query over the local API on the small graph of bench/overhead.py
while its user holds ever more other datasets (of 20 entities each, 0 to the number given), and
the first page of its datasets list (GET /v1/gb/datasets, 500 with their counts): the policies'
cost with the number of a user's datasets (migrations 0047 and 0048).

    .venv/bin/python bench/row_security.py --queries 0 --repeat 0 --datasets 10000
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
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "tests"), str(ROOT / "bench")]

import bench_setup  # noqa: E402  (bench/bench_setup.py)
import query as query_bench  # noqa: E402  (bench/query.py)
import remember as remember_bench  # noqa: E402  (bench/remember.py)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200, help="questions, each run as both roles")
    parser.add_argument("--repeat", type=int, default=5, help="remember runs per figure and role (0: none)")
    parser.add_argument("--size", default="10k", help="the bench/query.py database: 10k, 100k or 1m edges")
    parser.add_argument(
        "--datasets", type=int, default=0, help="other datasets of the querying user, at most"
    )
    args = parser.parse_args()
    if args.queries:
        retrieval(args.queries, query_bench.size_of(args.size))
    if args.repeat:
        remembers(args.repeat)
    if args.datasets:
        many_datasets(args.datasets)
    return 0


def many_datasets(most: int, runs: int = 100) -> None:
    import overhead

    print(f"\nover the local API, small graph, {runs} queries and lists each, as the user's datasets grow:")
    with overhead.bench_service() as (port, _api):
        held = 0
        for count in sorted({0, most // 100, most // 10, most}):
            holding(count - held)
            held = count
            way = overhead.OverHttp(port)  # a new connection: the server closes an idle one
            for _ in range(20):  # warm-up: connections, plans, caches
                way.post("/v1/gb/query", overhead.query_body())
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                way.post("/v1/gb/query", overhead.query_body())
                times.append((time.perf_counter() - started) * 1000)
            listed = []
            for _ in range(max(5, runs // 10)):
                started = time.perf_counter()
                way.connection.request("GET", "/v1/gb/datasets?user_id=bench")
                reply = way.connection.getresponse()
                assert reply.status == 200, reply.read()
                reply.read()
                listed.append((time.perf_counter() - started) * 1000)
            print(
                f"  {count:>7,} other datasets: query p50 {statistics.median(times):5.1f} ms"
                f"  p95 {query_bench.percentile(times, 0.95):5.1f} ms;"
                f" datasets list p50 {statistics.median(listed):6.1f} ms"
            )


def holding(more: int) -> None:
    """`more` datasets of 20 entities each for the bench's user, as its own transaction adds them."""
    from gligabao import bootstrap

    if more <= 0:
        return
    with bootstrap.bundle().database.transaction("bench") as uow:
        uow.conn.execute(
            "INSERT INTO gb_datasets (user_id, name) SELECT 'bench', 'other-' || g || '-' || %s"
            " FROM generate_series(1, %s) AS g",
            [more, more],
        )
        uow.conn.execute(
            """INSERT INTO gb_entities (dataset_id, name, normalized_name, type)
               SELECT d.id, 'Entity ' || g, 'entity ' || g, 'thing'
               FROM gb_datasets d CROSS JOIN generate_series(1, 20) AS g
               WHERE d.user_id = 'bench' AND d.name LIKE %s""",
            [f"other-%-{more}"],
        )
    with bootstrap.bundle().database.transaction("bench") as uow:
        # as a large remember does (db/graph_writes.py): the statistics see the rows just added
        uow.conn.execute("SELECT gb_analyze_stale_graph()")


def retrieval(count: int, edges: int) -> None:
    from gligabao import bootstrap
    from gligabao.memory.retrieval import DEFAULT_LIMITS
    from gligabao.settings import Settings

    dims = 256
    admin = bench_setup.bench_admin_url()
    plans = [query_bench.DatasetPlan("bench-large", "main", edges)]
    plans.append(query_bench.DatasetPlan("bench-medium", "main", query_bench.MEDIUM_EDGES))
    plans += [
        query_bench.DatasetPlan(f"bench-small-{i}", "main", query_bench.SMALL_EDGES)
        for i in range(query_bench.SMALL_DATASETS)
    ]
    url, ready = query_bench.ensure_database(admin, f"gligabao_bench_{edges}_d{dims}", rebuild=False)
    if not ready:
        clusters = max(50, sum(plan.edges for plan in plans) // 40)
        query_bench.build(url, dims, plans, clusters)
    bundles = {
        "owner": bootstrap.Bundle(Settings(database_url=url, embedding_dimensions=dims)),
        "gligabao_app": bootstrap.Bundle(
            Settings(database_url=query_bench.service_url(url), embedding_dimensions=dims)
        ),
    }
    questions = query_bench.probes(url, plans, count + 20, random.Random(edges))
    times: dict[str, list[float]] = {role: [] for role in bundles}
    for n, probe in enumerate(questions):
        for role in sorted(bundles, reverse=n % 2 == 1):  # alternate which role goes first
            bootstrap.install(bundles[role])
            started = time.perf_counter()
            query_bench.run_retrieval(probe, DEFAULT_LIMITS)
            if n >= 20:  # the first ones warm connections, plans and caches
                times[role].append((time.perf_counter() - started) * 1000)
    print(f"retrieval, {len(times['owner'])} questions ({edges:,}-edge database), each as both roles:")
    for role, values in times.items():
        print(
            f"  as {role:<13} p50 {statistics.median(values):5.1f} ms"
            f"  p95 {query_bench.percentile(values, 0.95):5.1f} ms"
        )
    for bundle in bundles.values():
        bundle.database.close()


def remembers(repeat: int) -> None:
    import http.server

    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    from remember_helpers import rule_based_model

    from gligabao import bootstrap
    from gligabao.settings import Settings

    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True  # see bench/remember.py
    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = rule_based_model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")
    providers = bench_setup.provider_settings(anthropic, openai)
    admin = bench_setup.bench_admin_url()
    with bench_setup.scratch_database(admin, providers) as scratch:
        owner_url = make_conninfo(**{**conninfo_to_dict(admin), "dbname": scratch.name})
        bundles = {
            "owner": bootstrap.Bundle(Settings(database_url=owner_url, **providers)),
            "gligabao_app": scratch.bundle,
        }
        remember_bench.measure(anthropic, openai, 10, "warm-up")
        print(f"\nremember, median of {repeat} runs per role (total ms, of which SQL ms):")
        for facts in remember_bench.SIZES:
            figures: dict[str, list[list[dict]]] = {role: [] for role in bundles}
            for i in range(repeat):
                for role in sorted(bundles, reverse=i % 2 == 1):
                    bootstrap.install(bundles[role])
                    figures[role].append(
                        remember_bench.measure(anthropic, openai, facts, f"{role}-{facts}-{i}")
                    )
            for index, (step, _) in enumerate(remember_bench.scenario(facts)):
                cells = []
                for role, runs in figures.items():
                    total = statistics.median(run[index]["total_ms"] for run in runs)
                    sql = statistics.median(run[index]["sql_ms"] for run in runs)
                    cells.append(f"as {role} {total:6.1f} ({sql:6.1f})")
                print(f"  {facts:>2} facts, {step:<15} " + "   ".join(cells))
        bundles["owner"].database.close()
        bootstrap.install(scratch.bundle)
    anthropic.stop()
    openai.stop()


if __name__ == "__main__":
    raise SystemExit(main())
