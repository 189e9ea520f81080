"""Where one index walk's time goes, on a bench/query.py database.

The facts' walk (`gb_nearest_edges`, half-precision HNSW index) is timed in turns, question by
question, in these shapes:
  * the function, as the context statement runs it, at each of `--widths`;
  * its query written inline, the question normalized and halved in SQL (no function call);
  * the same with the question normalized and halved by the client, the walk's ids only
    (what is left when nothing but the index walk runs).
With `--perf SECONDS` it then runs the function's walk for that long in one backend while
`perf record` samples that backend (cpu-clock), and prints the functions the samples fell in:
what the walk itself costs inside PostgreSQL and pgvector.

    python bench/walk_profile.py [--database gligabao_bench_100000_d1536] [--questions 40] [--perf 15]
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A row of `perf report --sort dso,symbol`: "23.02%  vector.so  [.] HnswLoadElementImpl".
SAMPLE_ROW = re.compile(r"^\s*([\d.]+%)\s+(\S+)\s+\[[.k]\]\s+(\S+)", re.MULTILINE)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="gligabao_bench_100000_d1536", help="a bench/query.py database")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument(
        "--rounds", type=int, default=5, help="times over the questions (the first not counted)"
    )
    parser.add_argument("--width", type=int, default=80, help="the facts' walk (GB_HNSW_FACT_CANDIDATES)")
    parser.add_argument("--widths", default="40,64,80,160", help="the function's walk also at these widths")
    parser.add_argument(
        "--perf", type=float, default=0, help="seconds of the walk under `perf record` (0: none)"
    )
    parser.add_argument("--top", type=int, default=12, help="how many of perf's functions to print")
    parser.add_argument("--data-dir", default=str(ROOT / "var" / "bench-pgdata"))
    return parser.parse_args()


def shapes(width: int, widths: list[int]) -> dict[str, tuple[str, int]]:
    """Each shape's statement and walk width (`hnsw.ef_search`)."""
    function = "SELECT count(*) FROM gb_nearest_edges(%(q)s, %(walk)s)"
    inline = """SELECT count(*) FROM (SELECT id, embedding <=> %(q)s FROM gb_edges
                ORDER BY gb_half(embedding) <=> gb_half(%(q)s::vector) LIMIT %(walk)s) AS walked"""
    ids_only = """SELECT count(*) FROM (SELECT id FROM gb_edges
                  ORDER BY gb_half(embedding) <=> %(half)s LIMIT %(walk)s) AS walked"""
    timed = {f"the function, width {w}": (function, w) for w in widths}
    timed[f"inline, width {width}"] = (inline, width)
    timed[f"ids only, question halved by the client, width {width}"] = (ids_only, width)
    return timed


def time_in_turns(conn, timed: dict[str, tuple[str, int]], vectors: list, rounds: int) -> None:
    """Every question through every shape, the order rotated; the first round warms the cache."""
    import numpy
    from pgvector import HalfVector
    from query import percentile  # bench/query.py

    for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
        conn.execute(f"SET {setting} = off")  # as in the gb_nearest_* functions
    names = list(timed)
    times: dict[str, list[float]] = {name: [] for name in names}
    turn = itertools.count()
    for round_ in range(rounds):
        for vector in vectors:
            unit = vector.to_numpy() / numpy.linalg.norm(vector.to_numpy())
            params = {"q": vector, "half": HalfVector(unit)}
            start = next(turn) % len(names)
            for name in names[start:] + names[:start]:
                statement, walk = timed[name]
                conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(walk)])
                started = time.perf_counter()
                conn.execute(statement, {**params, "walk": walk}).fetchone()
                if round_:
                    times[name].append((time.perf_counter() - started) * 1000)
    for name in names:
        print(
            f"  {name:<52} p50 {statistics.median(times[name]):6.2f} ms, "
            f"p95 {percentile(times[name], 0.95):6.2f} ms"
        )


def profile(conn, vectors: list, width: int, seconds: float, top: int) -> None:
    """`perf record` of this backend while it walks; the functions its samples fell in."""
    backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    statement = "SELECT count(*) FROM gb_nearest_edges(%(q)s, %(walk)s)"
    with tempfile.TemporaryDirectory() as scratch:
        data = str(Path(scratch) / "walk.data")
        recorder = subprocess.Popen(
            ["perf", "record", "-e", "cpu-clock", "-F", "2000", "-p", str(backend), "-o", data],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1)  # perf attaches
        walks, ended = 0, time.monotonic() + seconds
        for vector in itertools.cycle(vectors):
            if time.monotonic() > ended:
                break
            conn.execute(statement, {"q": vector, "walk": width}).fetchone()
            walks += 1
        recorder.send_signal(signal.SIGINT)
        recorder.wait()
        report = subprocess.run(
            ["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,symbol"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    rows = SAMPLE_ROW.findall(report)
    print(
        f"  perf record, cpu-clock, {walks} walks of width {width} in {seconds:.0f} s; where the samples fell:"
    )
    for share, library, function in rows[:top]:
        print(f"    {share:>7} {function} ({library})")


def main() -> int:
    args = parse_args()
    sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "bench"), str(ROOT / "tests")]
    import psycopg
    from bench_setup import bench_admin_url
    from binary_walks import questions  # bench/binary_walks.py
    from pgvector.psycopg import register_vector
    from query import database_url  # bench/query.py

    url = database_url(bench_admin_url(args.data_dir), args.database)
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        dims = conn.execute("SELECT dims FROM bench_meta LIMIT 1").fetchone()[0]
        edges = conn.execute("SELECT count(*) FROM gb_edges").fetchone()[0]
        print(f"the facts' index walk: {args.database}, {edges:,} edges of {dims} dimensions")
        vectors = questions(conn, dims, args.questions)
        widths = [int(w) for w in args.widths.split(",") if w]
        time_in_turns(conn, shapes(args.width, widths), vectors, args.rounds)
        if args.perf:
            if shutil.which("perf") is None:
                print("  perf is not installed (Debian: linux-perf): no profile")
                return 1
            profile(conn, vectors, args.width, args.perf, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
