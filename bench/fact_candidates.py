"""What remember's search for candidate facts costs around a hub entity, and its lookup of restated facts.

A remember's new facts are compared with the live facts around their known entities and with the
facts nearest to them by vector (`graph_writes.candidate_edges`, SPEC section 5, step 6), and each
candidate with every new fact. An agent's user is in most of the facts it remembers, so the facts
around that one entity grow with everything remembered. This bench times that one statement for
--new new facts about a hub entity holding each of --hub-facts live facts, among --edges other
edges of the dataset (vectors in topic clusters), as the service runs it (the application role,
under row-level security), at each cap of the facts compared per entity (`--per-entity`, the
default first; a cap above the hub's facts compares them all, as before the cap) and each
largest dataset searched exactly (`--exact-max`, GB_EXACT_SCAN_MAX_ROWS: a dataset of at most so
many live facts is compared by its full vectors instead of through the HNSW index), in turns,
median of --repeat, on a scratch database with the real schema and --dims-dimension vectors. Then
the lookup of the hub's facts that --new new facts restate, with migration 0042's index of facts
by source, relation and target, and without it.

    python bench/fact_candidates.py [--hub-facts 500,5000,20000] [--edges 20000] [--dims 1536]
                                    [--new 50] [--per-entity 1000,1000000000] [--exact-max 1000]
                                    [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core")]

CLUSTERS = 200


def main() -> int:
    from gligabao.limits import DEFAULT_LIMITS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hub-facts", default="500,5000,20000")
    parser.add_argument("--edges", type=int, default=20_000)
    parser.add_argument("--dims", type=int, default=1536)
    parser.add_argument("--new", type=int, default=50)
    parser.add_argument("--per-entity", default="1000,1000000000")
    parser.add_argument("--exact-max", default=str(DEFAULT_LIMITS.exact_scan_max_rows))
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    import numpy as np
    import psycopg
    from bench_setup import bench_admin_url, scratch_database
    from remember import indexes_dropped  # bench/remember.py

    caps = [int(n) for n in args.per_entity.split(",")]
    exact_maxes = [int(n) for n in args.exact_max.split(",")]
    rng = np.random.default_rng(7)
    centroids = unit_rows(rng.normal(size=(CLUSTERS, args.dims)))
    print(
        f"candidate facts: {args.new} new facts about an entity with N live facts, among {args.edges:,} "
        f"other edges, {args.dims}-dimension vectors; median of {args.repeat}, the caps in turns"
    )
    with scratch_database(bench_admin_url(), {"embedding_dimensions": args.dims}) as scratch:
        # The HNSW indexes are built after the rows, as a restore would.
        with (
            indexes_dropped(scratch.owner_url, ["gb_edges_embedding_half", "gb_entities_embedding_half"]),
            psycopg.connect(scratch.owner_url, autocommit=True) as conn,
        ):
            dataset_id, hub, others = load(conn, rng, centroids, args.edges)
        held = 0
        for hub_facts in [int(n) for n in args.hub_facts.split(",")]:
            with psycopg.connect(scratch.owner_url, autocommit=True) as conn:
                add_hub_facts(conn, rng, centroids, dataset_id, hub, others, hub_facts - held)
            held = hub_facts
            times = candidate_times(
                scratch.bundle.database, rng, centroids, dataset_id, hub, caps, exact_maxes, args
            )
            print(
                f"  hub with {hub_facts:>7,} facts: "
                + ", ".join(
                    f"cap {cap:,}{f' (exact up to {exact:,})' if len(exact_maxes) > 1 else ''}: "
                    f"{statistics.median(t):7.1f} ms"
                    for (cap, exact), t in times.items()
                )
            )
            restated = restated_times(scratch, dataset_id, hub, args)
            print(
                f"    the live facts {args.new} new facts restate: "
                + ", ".join(f"{label}: {statistics.median(t):6.1f} ms" for label, t in restated.items())
            )
    return 0


def unit_rows(matrix):
    import numpy as np

    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def clustered(rng, centroids, count: int):
    """`count` vectors near random centroids (cosine about 0.8 with theirs)."""
    picks = centroids[rng.integers(0, len(centroids), size=count)]
    noise = rng.normal(scale=0.75 / len(centroids[0]) ** 0.5, size=picks.shape)
    return unit_rows(picks + noise)


def load(conn, rng, centroids, edges: int) -> tuple[int, int, list[int]]:
    """A dataset of `edges` edges among 2,000 entities, and the hub entity (no facts yet)."""
    from pgvector.psycopg import register_vector

    register_vector(conn)
    dataset_id = conn.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('bench', 'main') RETURNING id")
    dataset_id = dataset_id.fetchone()[0]
    entity_vectors = clustered(rng, centroids, 2_001)
    with conn.cursor().copy(
        "COPY gb_entities (dataset_id, name, normalized_name, type, description, embedding) FROM STDIN"
    ) as copy:
        for i, vector in enumerate(entity_vectors):
            name = "The user" if i == 0 else f"Thing {i}"
            copy.write_row([dataset_id, name, name.lower(), "thing", "", vector])
    ids = [row[0] for row in conn.execute("SELECT id FROM gb_entities ORDER BY id")]
    hub, others = ids[0], ids[1:]
    ends = rng.integers(0, len(others), size=(edges, 2))
    write_edges(conn, dataset_id, [(others[a], others[b]) for a, b in ends], clustered(rng, centroids, edges))
    # A served database has its statistics; without them the first rows timed a plan of no statistics.
    conn.execute("VACUUM ANALYZE gb_entities")
    return dataset_id, hub, others


def add_hub_facts(conn, rng, centroids, dataset_id: int, hub: int, others: list[int], count: int) -> None:
    from pgvector.psycopg import register_vector

    register_vector(conn)
    targets = rng.integers(0, len(others), size=count)
    write_edges(conn, dataset_id, [(hub, others[t]) for t in targets], clustered(rng, centroids, count))
    conn.execute("VACUUM ANALYZE gb_edges")


def write_edges(conn, dataset_id: int, ends: list[tuple[int, int]], vectors) -> None:
    with conn.cursor().copy(
        "COPY gb_edges (dataset_id, source_id, target_id, relation, description, valid_at, embedding) FROM STDIN"
    ) as copy:
        for (source, target), vector in zip(ends, vectors, strict=True):
            copy.write_row([dataset_id, source, target, "likes", "", "2026-01-01T00:00:00Z", vector])


def candidate_times(
    database, rng, centroids, dataset_id: int, hub: int, caps: list[int], exact_maxes: list[int], args
) -> dict[tuple[int, int], list[float]]:
    from gligabao.db import graph_writes

    times: dict[tuple[int, int], list[float]] = {(cap, exact): [] for cap in caps for exact in exact_maxes}
    for run in range(args.repeat + 1):
        new_facts = [v.tolist() for v in clustered(rng, centroids, args.new)]
        for cap, exact in times:
            with database.transaction("bench", "main") as uow:
                started = time.perf_counter()
                graph_writes.candidate_edges(
                    uow.conn,
                    dataset_id,
                    [hub],
                    new_facts,
                    threshold=0.75,
                    limit=50,
                    per_entity=cap,
                    exact_max=exact,
                )
                if run:  # the first warms the caches
                    times[(cap, exact)].append((time.perf_counter() - started) * 1000)
    return times


def restated_times(scratch, dataset_id: int, hub: int, args) -> dict[str, list[float]]:
    """The lookup of the facts that --new new facts about the hub restate (their source, target and
    relation; `graph_writes.known_entities_and_fact_edges`), with migration 0042's index of them
    and without it (dropped, then built again), --repeat times each."""
    import psycopg
    from pgvector.psycopg import register_vector
    from remember import indexes_dropped  # bench/remember.py

    from gligabao.db import graph_writes
    from gligabao.limits import DEFAULT_LIMITS

    with psycopg.connect(scratch.owner_url, autocommit=True) as conn:
        register_vector(conn)
        targets = conn.execute(
            """SELECT e.normalized_name, e.embedding FROM gb_entities e
               WHERE e.id IN (SELECT target_id FROM gb_edges WHERE source_id = %s LIMIT %s)""",
            [hub, args.new],
        ).fetchall()
    names = ["the user", *(name for name, _ in targets)]
    vectors = [[1.0] + [0.0] * (args.dims - 1), *(vector.to_list() for _, vector in targets)]
    ends = [(0, i, "likes") for i in range(1, len(names))]

    def timed() -> list[float]:
        times = []
        for run in range(args.repeat + 1):
            with scratch.bundle.database.transaction("bench", "main") as uow:
                started = time.perf_counter()
                graph_writes.known_entities_and_fact_edges(
                    uow.conn,
                    dataset_id,
                    names,
                    vectors,
                    0.75,
                    ends,
                    exact_max=DEFAULT_LIMITS.exact_scan_max_rows,
                    walk=DEFAULT_LIMITS.hnsw_candidates,
                )
                if run:  # the first warms the caches
                    times.append((time.perf_counter() - started) * 1000)
        return times

    with_index = timed()
    with indexes_dropped(scratch.owner_url, ["gb_edges_fact"]):
        return {"with the index": with_index, "without it": timed()}


if __name__ == "__main__":
    raise SystemExit(main())
