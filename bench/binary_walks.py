"""Binary-quantized index walks against the half-precision ones, on a bench/query.py database.

The question: would HNSW indexes of the vectors' signs (pgvector's `binary_quantize`, compared by
Hamming distance; 192 bytes an entry at 1536 dimensions instead of 3 kB) find the nearest facts as
the half-precision indexes of migration 0019 do, and faster? They are a ninth of the size, so a
cache that cannot hold the half-precision indexes could hold them.

For questions built as bench/query.py builds them (a random live edge's cluster centroid plus
noise), on `gb_edges`, it times:
  * the half-precision walk, as `gb_nearest_edges` runs it (`--width` rows, their full distances);
  * the binary walk at each of `--binary-widths`, its rows re-ranked by their full distances and
    the first `--width` kept (a search must re-rank: the signs cannot order rows by cosine);
and reports each one's recall of the exact scan's nearest 10 and nearest `--width` (the whole
table's, as the index walks see it). The binary index is built once (`bench_edges_bits`, kept
for the next run; `--drop` removes it), and the service never reads it.

    python bench/binary_walks.py [--database gligabao_bench_100000_d1536] [--questions 40]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INDEX = "bench_edges_bits"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="gligabao_bench_100000_d1536", help="a bench/query.py database")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--width", type=int, default=80, help="the facts' walk (GB_HNSW_FACT_CANDIDATES)")
    parser.add_argument("--binary-widths", default="80,160,320,640", help="the binary walks' widths")
    parser.add_argument("--maintenance-work-mem", default="4GB", help="for the binary index's build")
    parser.add_argument("--drop", action="store_true", help="drop the binary index and stop")
    parser.add_argument("--data-dir", default=str(ROOT / "var" / "bench-pgdata"))
    return parser.parse_args()


def ensure_binary_index(conn, dims: int, memory: str) -> None:
    if conn.execute("SELECT to_regclass(%s) IS NOT NULL", [INDEX]).fetchone()[0]:
        return
    started = time.perf_counter()
    conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", [memory])
    conn.execute(
        f"CREATE INDEX {INDEX} ON gb_edges USING hnsw ((binary_quantize(embedding)::bit({dims})) bit_hamming_ops) "
        "WITH (m = 16, ef_construction = 128)"
    )
    print(f"  built {INDEX} in {time.perf_counter() - started:.0f} s")


def questions(conn, dims: int, count: int) -> list:
    """As bench/query.py's probes: a random live edge's cluster centroid, plus its noise."""
    from pgvector import Vector
    from query import QUESTION_NOISE, nearest_centroid, unit_gauss  # bench/query.py

    rng = random.Random(7)
    high = conn.execute("SELECT max(id) FROM gb_edges").fetchone()[0]
    found = []
    while len(found) < count:
        row = conn.execute(
            "SELECT embedding FROM gb_edges WHERE id >= %s AND expired_at IS NULL ORDER BY id LIMIT 1",
            [rng.randint(1, high)],
        ).fetchone()
        if row is None:
            continue
        noise = unit_gauss(rng, dims, QUESTION_NOISE)
        found.append(Vector([a + b for a, b in zip(nearest_centroid(conn, row[0]), noise, strict=True)]))
    return found


def timed_ids(conn, statement: str, params: dict) -> tuple[float, list[int]]:
    started = time.perf_counter()
    rows = conn.execute(statement, params).fetchall()
    return (time.perf_counter() - started) * 1000, [row[0] for row in rows]


def exact_nearest(conn, vectors: list, width: int) -> list[list[int]]:
    conn.execute("SET enable_indexscan = off")
    try:
        return [
            timed_ids(
                conn,
                "SELECT id FROM gb_edges ORDER BY embedding <=> %(q)s LIMIT %(width)s",
                {"q": v, "width": width},
            )[1]
            for v in vectors
        ]
    finally:
        conn.execute("RESET enable_indexscan")


def report(
    conn, name: str, statement: str, ef_search: int, vectors: list, exact: list[list[int]], width: int
):
    """Each question twice (the first round warms the cache); the second round's figures."""
    from query import percentile  # bench/query.py

    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(ef_search)])
    times, top10, top_width = [], [], []
    for round_ in range(2):
        for vector, nearest in zip(vectors, exact, strict=True):
            ms, ids = timed_ids(conn, statement, {"q": vector, "width": width, "walk": ef_search})
            if round_:
                times.append(ms)
                top10.append(len(set(ids[:10]) & set(nearest[:10])) / 10)
                top_width.append(len(set(ids) & set(nearest)) / width)
    print(
        f"  {name:<34} walks {ef_search:>4}: p50 {statistics.median(times):6.2f} ms, "
        f"p95 {percentile(times, 0.95):6.2f} ms; the exact scan's nearest 10 found "
        f"{statistics.mean(top10):.3f}, nearest {width} {statistics.mean(top_width):.3f}"
    )


def main() -> int:
    args = parse_args()
    sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "bench"), str(ROOT / "tests")]
    import psycopg
    from bench_setup import bench_admin_url
    from pgvector.psycopg import register_vector
    from query import database_url  # bench/query.py

    url = database_url(bench_admin_url(args.data_dir), args.database)

    with psycopg.connect(url, autocommit=True) as conn:
        if args.drop:
            conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
            return 0
        register_vector(conn)
        dims = conn.execute("SELECT dims FROM bench_meta LIMIT 1").fetchone()[0]
        edges = conn.execute("SELECT count(*) FROM gb_edges").fetchone()[0]
        print(
            f"binary index walks against half-precision ones: {args.database}, {edges:,} edges of {dims} dimensions"
        )
        ensure_binary_index(conn, dims, args.maintenance_work_mem)
        sizes = conn.execute(
            "SELECT pg_size_pretty(pg_relation_size('gb_edges_embedding_half')), pg_size_pretty(pg_relation_size(%s))",
            [INDEX],
        ).fetchone()
        print(f"  the edges' index: half precision {sizes[0]}, binary {sizes[1]}")
        vectors = questions(conn, dims, args.questions)
        exact = exact_nearest(conn, vectors, args.width)
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            conn.execute(f"SET {setting} = off")  # as in the gb_nearest_* functions
        half = """SELECT id, embedding <=> %(q)s FROM gb_edges
                  ORDER BY gb_half(embedding) <=> gb_half(%(q)s::vector) LIMIT %(width)s"""
        report(conn, "half precision", half, args.width, vectors, exact, args.width)
        for walk in (int(w) for w in args.binary_widths.split(",")):
            binary = f"""SELECT id FROM (
                SELECT id, embedding <=> %(q)s AS distance FROM gb_edges
                ORDER BY binary_quantize(embedding)::bit({dims}) <~> binary_quantize(%(q)s::vector) LIMIT %(walk)s
            ) AS walked ORDER BY distance LIMIT %(width)s"""  # the type's length is no parameter
            report(conn, "binary, re-ranked", binary, walk, vectors, exact, args.width)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
