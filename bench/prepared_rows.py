"""What keeping a prepared text's vectors costs: written, read back and deleted, two forms.

What keeping a prepared text costs (memory/prepare_ahead.py, memory/windows.py): its vectors
written and read back as `gb_prepared_texts` holds them since migration 0041 (a `vector[]`, sent and
read in binary: db/prepared.py's `save` and `peek`) against the form before it (a two-dimensional
`real[]` sent and read as text).

    .venv/bin/python bench/prepared_rows.py [--vectors 60] [--rounds 30]

A text of 50 facts about 10 entities makes about 60 strings to embed. The bench writes one
prepared text of `--vectors` random vectors of the service's size (1536) into a scratch database of
var/bench-pgdata (or DATABASE_URL's server), reads it back and deletes it, `--rounds` times, the two
forms in turns; the first round is not counted. Prints the median and p95 of each step, in ms.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def assert_same(read: list[list[float]], written: list[list[float]]) -> None:
    """The vectors read back are those written, to single precision (both forms keep 4-byte floats)."""
    assert len(read) == len(written)
    for got, wanted in zip(read, written, strict=True):
        assert len(got) == len(wanted)
        assert all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-7) for a, b in zip(got, wanted, strict=True))


def as_vectors_now(conn, text, vectors: list[list[float]]) -> dict[str, float]:
    from gligabao.db import prepared

    strings = [f"s{i}" for i in range(len(vectors))]
    started = time.perf_counter()
    prepared.save(conn, text, {}, {}, strings, vectors)
    written = _ms(started)
    started = time.perf_counter()
    row = prepared.peek(conn, [text.artifact_id])[text.artifact_id]
    read = _ms(started)
    assert_same(row.vectors, vectors)
    prepared.drop(conn, [text.artifact_id])
    return {"write": written, "read": read}


def as_real_arrays_before(conn, text, vectors: list[list[float]]) -> dict[str, float]:
    """The statements of db/prepared.py before migration 0041, into a table of the same shape."""
    started = time.perf_counter()
    conn.execute(
        "INSERT INTO prepared_before (artifact_id, vectors) VALUES (%s, %s::real[])",
        [text.artifact_id, vectors],
    )
    written = _ms(started)
    started = time.perf_counter()
    row = conn.execute(
        "SELECT vectors FROM prepared_before WHERE artifact_id = %s", [text.artifact_id]
    ).fetchone()
    read = _ms(started)
    assert_same(row[0], vectors)
    conn.execute("DELETE FROM prepared_before WHERE artifact_id = %s", [text.artifact_id])
    return {"write": written, "read": read}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=60, help="vectors of the prepared text")
    parser.add_argument("--rounds", type=int, default=30, help="the first is not counted")
    args = parser.parse_args()
    import psycopg
    from bench_setup import bench_admin_url, scratch_database

    from gligabao.db.connection import register_vector
    from gligabao.db.prepared import WaitingText

    with scratch_database(bench_admin_url(), {}) as scratch:
        dims = scratch.bundle.settings.embedding_dimensions
        rng = random.Random(41)
        vectors = [[rng.uniform(-1, 1) for _ in range(dims)] for _ in range(args.vectors)]
        # As the tables' owner: the rows of a user's pending text, no row-level security in the way.
        with psycopg.connect(scratch.owner_url, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("CREATE TABLE prepared_before (artifact_id bigint PRIMARY KEY, vectors real[])")
            [dataset] = conn.execute(
                "INSERT INTO gb_datasets (user_id, name) VALUES ('bench', 'main') RETURNING id"
            )
            [artifact] = conn.execute(
                "INSERT INTO gb_artifacts (dataset_id, kind, text, status) VALUES (%s, 'text', 'x', 'pending') RETURNING id",
                [dataset[0]],
            )
            text = WaitingText(artifact[0], dataset[0], "x", None, datetime.now(UTC))
            forms = {
                "vector[] in binary (now)": as_vectors_now,
                "real[] as text (before)": as_real_arrays_before,
            }
            times: dict[tuple[str, str], list[float]] = defaultdict(list)
            for round_ in range(args.rounds):
                for name in list(forms) if round_ % 2 else list(reversed(forms)):
                    for step, ms in forms[name](conn, text, vectors).items():
                        if round_:
                            times[(name, step)].append(ms)
    print(f"a prepared text of {args.vectors} vectors of {dims} numbers, {args.rounds - 1} rounds counted")
    for name in forms:
        parts = [
            f"{step} {statistics.median(times[(name, step)]):7.2f} / {percentile(times[(name, step)], 0.95):7.2f}"
            for step in ("write", "read")
        ]
        print(f"  {name:<26} " + ", ".join(parts) + " ms (p50 / p95)")


if __name__ == "__main__":
    main()
