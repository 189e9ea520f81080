"""What entity resolution's match costs in a large dataset (remember, SPEC section 5, step 5).

A remember matches each entity it extracted to a stored one: the same normalized name, else the
nearest vector at a cosine of at least 0.75 whose name could name the same entity (migration
0011). This bench times that one statement (`graph_writes.match_entities`) for --new entities
(half of them sharing a word with stored names, half not; none the same name), median of
--repeat, as the service runs it (the application role, under row-level security), on a scratch
database with the real schema and --entities entities of --dims-dimension vectors in one dataset.

    python bench/entity_match.py [--entities 25000] [--dims 1536] [--new 50] [--repeat 9]
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

WORDS = [
    f"{a}{b}{c}" for a in "bdfgklmnprstvz" for b in "aeiou" for c in ("ra", "lo", "nd", "sh", "ck", "mi")
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=25_000)
    parser.add_argument("--dims", type=int, default=1536)
    parser.add_argument("--new", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()

    import psycopg
    from bench_setup import bench_admin_url, scratch_database

    admin_url = bench_admin_url()
    with scratch_database(admin_url, {"embedding_dimensions": args.dims}) as scratch:
        with psycopg.connect(scratch.owner_url, autocommit=True) as conn:
            rng = random.Random(7)
            stored = load(conn, rng, args.entities, args.dims)
        times, matched = match_times(scratch.bundle.database, rng, stored, args)
    print(
        f"entity match: {args.new} new entities against {args.entities:,} stored ones with "
        f"{args.dims}-dimension vectors, median of {args.repeat}"
    )
    print(
        f"  median {statistics.median(times):7.1f} ms  max {max(times):7.1f} ms  "
        f"({statistics.median(times) / args.new:.2f} ms an entity; {matched} matched)"
    )
    return 0


def random_name(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.choice((1, 2, 2, 3))))


def load(conn, rng: random.Random, entities: int, dims: int) -> set[str]:
    names = set()
    while len(names) < entities:
        names.add(random_name(rng))
    dataset = conn.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('bench', 'main') RETURNING id")
    conn.execute(
        f"""INSERT INTO gb_entities (dataset_id, name, normalized_name, type, description, embedding)
            SELECT %s, n, n, 'person', 'an entity of the bench',
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, {dims}) WHERE n IS NOT NULL)::vector
            FROM unnest(%s::text[]) AS n""",
        [dataset.fetchone()[0], sorted(names)],
    )
    conn.execute("VACUUM ANALYZE gb_entities")
    return names


def match_times(database, rng: random.Random, stored: set[str], args) -> tuple[list[float], int]:
    from gligabao.db import graph_writes
    from gligabao.limits import DEFAULT_LIMITS

    dataset_id = None
    times, matched = [], 0
    for _ in range(args.repeat + 2):
        new = []
        while len(new) < args.new:
            words = rng.choice(sorted(stored)).split() if len(new) % 2 else []  # half share a word
            candidate = " ".join([*words[:1], random_name(rng)])
            if candidate not in stored:
                new.append(candidate)
        vectors = [[rng.random() - 0.5 for _ in range(args.dims)] for _ in new]
        with database.transaction("bench", "main") as uow:
            dataset_id = dataset_id or uow.dataset_id
            started = time.perf_counter()
            ids = graph_writes.match_entities(
                uow.conn,
                dataset_id,
                new,
                vectors,
                threshold=0.75,
                exact_max=DEFAULT_LIMITS.exact_scan_max_rows,
                walk=DEFAULT_LIMITS.hnsw_candidates,
            )
            times.append((time.perf_counter() - started) * 1000)
        matched = sum(i is not None for i in ids)
    return times[2:], matched  # the first two warm the caches


if __name__ == "__main__":
    raise SystemExit(main())
