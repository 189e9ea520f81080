"""Graph export benchmark of GET /v1/gb/graph: walk a whole dataset page by page, in bounded memory.

It exports the large dataset of a database `bench/query.py` built (`--sizes 100k` builds the
100,000-edge one in var/bench-pgdata; build it first, it is reused), through the graph function's
own Lambda handler (functions/graph/app.py) called in-process with API Gateway payload 2.0 events,
exactly as the Lambda runtime calls it: validation, the page statement, rendering, the response
size check. Each format is walked twice:
1. timed: pages, total time, rows/s, bytes, the largest page, and the process's RSS before the
   walk and at its highest (read after every page);
2. under tracemalloc: the peak of Python allocations during each page (reset between pages),
   which is the memory one page needs, and the peak of the whole walk.
Bounded memory means: the whole walk peaks at about what one page needs, whatever the dataset's size.

    python bench/export.py [--size 100k] [--dims 256] [--limit 1000] [--formats json,graphml]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
LARGE_USER = "bench-large"  # the queried dataset of bench/query.py


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--size", default="100k", help="the bench/query.py size whose large dataset is exported"
    )
    parser.add_argument("--dims", type=int, default=256, help="vector dimensions of that database")
    parser.add_argument("--limit", type=int, default=None, help="rows a page (default: the API's default)")
    parser.add_argument("--formats", default="json,graphml", help="comma-separated: json, graphml")
    parser.add_argument("--data-dir", default=str(ROOT / "var" / "bench-pgdata"))
    return parser.parse_args()


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Walk:
    pages: int = 0
    entities: int = 0
    edges: int = 0
    bytes: int = 0
    largest_page: int = 0
    seconds: float = 0.0
    rss_before: int = 0
    rss_peak: int = 0
    page_peaks: list[int] = field(default_factory=list)  # tracemalloc, per page
    walk_peak: int = 0


def graph_handler():
    spec = importlib.util.spec_from_file_location(
        "gligabao_function_graph", ROOT / "functions" / "graph" / "app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


def get_page(handler, params: dict) -> tuple[dict, str, str | None]:
    """(the Lambda response, its body, the next cursor) of one GET /v1/gb/graph."""
    from gligabao.local.server import build_event

    route = SimpleNamespace(path="/v1/gb/graph", method="GET")
    event = build_event(route, {}, "GET", "/v1/gb/graph", urlencode(params), {}, b"", "127.0.0.1")
    response = handler(event, None)
    if response["statusCode"] != 200:
        raise SystemExit(f"GET /v1/gb/graph answered {response['statusCode']}: {response['body'][:300]}")
    body = response["body"]
    headers = {name.lower(): value for name, value in (response.get("headers") or {}).items()}
    cursor = json.loads(body)["next_cursor"] if params["format"] == "json" else headers.get("x-next-cursor")
    return response, body, cursor


def walk(handler, params: dict, traced: bool) -> Walk:
    result, cursor = Walk(rss_before=rss_bytes()), None
    result.rss_peak = result.rss_before
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    while True:
        if traced:
            tracemalloc.reset_peak()
        response, body, cursor = get_page(handler, {**params, **({"cursor": cursor} if cursor else {})})
        if traced:  # the page's own memory: before the bench parses it
            result.page_peaks.append(tracemalloc.get_traced_memory()[1])
        size = len(json.dumps(body))  # as the Lambda response carries it
        result.pages += 1
        result.bytes += size
        result.largest_page = max(result.largest_page, size)
        if params["format"] == "json":
            page = json.loads(body)
            result.entities += len(page["entities"])
            result.edges += len(page["edges"])
        else:
            result.entities += body.count("<node ")
            result.edges += body.count("<edge ")
        del response, body
        result.rss_peak = max(result.rss_peak, rss_bytes())
        if cursor is None:
            break
    result.seconds = time.perf_counter() - started
    if traced:
        result.walk_peak = max(result.page_peaks)
        tracemalloc.stop()
    return result


def mb(count: int) -> str:
    return f"{count / 1e6:.1f} MB"


def main() -> int:
    args = parse_args()
    sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "bench")]
    from bench_setup import bench_admin_url
    from query import database_url  # bench/query.py: the same scratch server

    from gligabao import bootstrap
    from gligabao.limits import DEFAULT_LIMITS
    from gligabao.settings import Settings

    edges = SIZES.get(args.size.lower()) or int(args.size)
    name = f"gligabao_bench_{edges}_d{args.dims}"
    url = database_url(bench_admin_url(args.data_dir), name)
    import psycopg

    try:
        with psycopg.connect(url) as conn:
            counts = conn.execute(
                """SELECT (SELECT count(*) FROM gb_entities e WHERE e.dataset_id = d.id),
                          (SELECT count(*) FROM gb_edges g WHERE g.dataset_id = d.id),
                          (SELECT count(*) FROM gb_edges g WHERE g.dataset_id = d.id AND g.expired_at IS NULL)
                   FROM gb_datasets d WHERE d.user_id = %s AND d.name = 'main'""",
                [LARGE_USER],
            ).fetchone()
    except psycopg.OperationalError:
        counts = None
    if not counts:
        print(f"no database {name}: build it first with  python bench/query.py --sizes {args.size}")
        return 1
    bootstrap.install(bootstrap.Bundle(Settings(database_url=url, embedding_dimensions=args.dims)))
    handler = graph_handler()
    limit = args.limit or DEFAULT_LIMITS.graph_page_rows
    print(
        f"gligabao graph export bench: database {name}, dataset {LARGE_USER}/main: {counts[0]:,} entities, "
        f"{counts[1]:,} edges ({counts[2]:,} live); pages of {limit:,} rows through the graph function's "
        f"Lambda handler in-process; {os.cpu_count()} cores"
    )
    for format_ in args.formats.split(","):
        for include_expired in ("false", "true"):
            params = {"user_id": LARGE_USER, "dataset": "main", "format": format_}
            params |= {"include_expired": include_expired, "limit": str(limit)}
            get_page(handler, {**params, "limit": "1"})  # warm-up: connection, plans
            timed = walk(handler, params, traced=False)
            traced = walk(handler, params, traced=True)
            rows = timed.entities + timed.edges
            assert (traced.entities, traced.edges) == (timed.entities, timed.edges)
            expected_edges = counts[1] if include_expired == "true" else counts[2]
            assert (timed.entities, timed.edges) == (counts[0], expected_edges), (timed.entities, timed.edges)
            pages_sorted = sorted(traced.page_peaks)
            print(
                f"\n  {format_}, include_expired={include_expired}: {timed.pages:,} pages, "
                f"{timed.entities:,} entities + {timed.edges:,} edges = {rows:,} rows (each exactly once)\n"
                f"    time {timed.seconds:.2f} s, {rows / timed.seconds:,.0f} rows/s, "
                f"{timed.seconds / timed.pages * 1000:.1f} ms a page; {mb(timed.bytes)} in all, "
                f"largest page {mb(timed.largest_page)} (Lambda cap 6 MB)\n"
                f"    RSS before the walk {mb(timed.rss_before)}, highest during it {mb(timed.rss_peak)} "
                f"(+{mb(timed.rss_peak - timed.rss_before)}; the export is {mb(timed.bytes)})\n"
                f"    tracemalloc peak a page: median {mb(pages_sorted[len(pages_sorted) // 2])}, "
                f"max {mb(traced.walk_peak)} = the peak of the whole walk"
            )
    print(
        f"\n  peak RSS of the process (ru_maxrss): {mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
