"""Retrieval benchmark of POST /v1/gb/query: our own time per question, at 10k, 100k and 1M edges.

It builds synthetic graphs with its own generator (entities with pseudo-word names and
descriptions drawn from a Zipf vocabulary, edges with hub entities, long texts cut into
chunks with summaries, 5% of the edges superseded; vectors in topic clusters so that a
question has neighbours above the 0.75 cosine threshold, and a question's vector close to
one cluster) in a scratch database of its own, migrated with GB_EMBEDDING_DIMENSIONS (256 by
default, to keep 1M edges buildable on 2 cores), kept between runs in var/bench-pgdata.

Each size has one large dataset holding the edges (the queried one, the target) and, in the
same tables, a medium dataset (5,000 edges: larger than the exact-scan limit, so its vector
searches take the HNSW path with the dataset post-filter) and 10 small ones (300 edges: exact
scan). Questions are timed through `gligabao.memory.retrieval.retrieve` as the endpoint
runs it (user transaction, keyword statement while the embedding runs in its thread, context
statement), with the providers answering instantly: the figures are our own retrieval time.
Then: the statements per retrieval, and the recall of the similarity searches against an
exact scan of the same dataset (the same statement with the exact path forced).

    python bench/query.py [--sizes 10k,100k,1m] [--dims 256] [--queries 300] [--rebuild]
    python bench/query.py --world realistic [--sizes 10k,100k] [--analyzed]   (bench/realistic_world.py)

Targets: p95 at most 15 ms at 100k edges, and at 1M edges 40 ms warm (100 ms from a cold cache),
with a recall of the similar facts against an exact scan of at least 0.99.

`--hops` times the retrieval in turns as the service runs it, without its third hop and without both
its hops (the multi-hop retrieval's own cost). `--floor` times, in turns with the whole retrieval,
what it costs at the least: the keyword statement and the four index walks alone (and all four at
once, each on its own connection; and one walk as wide as the four together), and the retrieval
without its expansion around the seeds. `--texts N` first gives the queried and the medium datasets
N short unchunked texts each (kept in the database), as an agent remembering message by message
would: the passage searches must not read them. `--walks-first` (after a restart with the page cache
dropped) times each question's walks and its keyword statement before anything else reads its rows:
the least a question costs from a cold cache.

Besides the whole retrieval, it prints its two statements apart: the keyword statement runs while
the question is embedded (with a real provider, behind an embeddings request of tens of
milliseconds), so what a query adds after the embedding is the context statement and the ranking.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS_MS = {100_000: 15.0, 1_000_000: 40.0}
COLD_TARGETS_MS = {1_000_000: 100.0}
SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
MEDIUM_EDGES = 5_000
SMALL_DATASETS = 10
SMALL_EDGES = 300

COMMON_WORDS = """engineer manager company project team office city country river school university
hospital market bank museum garden street house family friend doctor teacher student artist writer
music book film game car train plane ship phone computer software data report meeting contract
product service customer budget sales design research science history language travel holiday
birthday wedding dinner sport football tennis coffee restaurant hotel airport station park lake
mountain beach island village region capital founder partner colleague neighbour cousin sister
brother mother father daughter son wife husband pet dog cat horse startup investor lawyer nurse
chef pilot painter singer actor author editor journalist professor scientist developer designer""".split()
SYLLABLES = (
    "ka ri to me lu sa no vi de ra po li mu te zo an el or is un ba ce di fo ga he ju "
    "ko la mi na pe qu ro si tu va we xi ya zu bo ne ta ke"
).split()
TYPES = ("person", "organization", "place", "event", "object", "concept")
RELATIONS = (
    "works_at",
    "lives_in",
    "knows",
    "founded",
    "owns",
    "manages",
    "visited",
    "studied_at",
    "is_married_to",
    "is_friend_of",
    "member_of",
    "located_in",
    "born_in",
    "invested_in",
    "wrote",
    "likes",
    "reports_to",
    "partner_of",
    "sold",
    "bought",
)
QUESTIONS = (
    "Where does {name} {verb}?",
    "What do you know about {name}?",
    "Who {verb} {name}?",
    "Tell me about {name} and the {word}.",
    "Which {word} is {name} connected to?",
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="10k,100k", help="comma-separated: 10k, 100k, 1m, or a number of edges"
    )
    parser.add_argument("--dims", type=int, default=256, help="vector dimensions of the scratch database")
    parser.add_argument(
        "--queries", type=int, default=None, help="timed questions per size (300; with --world realistic 60)"
    )
    parser.add_argument(
        "--recall-queries", type=int, default=60, help="questions checked against an exact scan"
    )
    parser.add_argument("--rebuild", action="store_true", help="drop and rebuild the scratch databases")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also where the statements of one question, and of the question whose keyword statement "
        "was slowest, spend their time (EXPLAIN ANALYZE, per CTE)",
    )
    parser.add_argument(
        "--ef-sweep",
        default="",
        help="also the queried dataset's recall at these hnsw.ef_search values (of every index), e.g. 40,64,200,1000 "
        "(rows no value finds are unreachable in the index's graph)",
    )
    parser.add_argument(
        "--walks",
        default="",
        help="also the queried dataset's retrieval timed at these widths of the index walks, in turns "
        "question by question: the others' candidates:the facts', e.g. 64:64,64:80,80:80",
    )
    parser.add_argument(
        "--hops",
        action="store_true",
        help="also the queried dataset's retrieval in turns as it is, without its third hop, and without its hops",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also the least the retrieval's shape costs: the keyword statement and the four index "
        "walks alone (as the context statement runs them), timed in turns with the whole retrieval",
    )
    parser.add_argument(
        "--walks-first",
        action="store_true",
        help="right after the warm-up, for each question on the queried dataset, the four index walks "
        "alone, then its retrieval (after a restart with the page cache dropped: the least it costs from "
        "a cold cache); the timings after it are no longer cold",
    )
    parser.add_argument(
        "--iterative-scans",
        action="store_true",
        help="also the medium dataset's 10 nearest edges by pgvector 0.8's iterative index scans "
        "against the exact scan the retrieval runs for it (time and recall)",
    )
    parser.add_argument(
        "--texts",
        type=int,
        default=0,
        help="first give the queried and the medium datasets at least this many short unchunked texts "
        "(the messages an agent remembers; kept in the database): the passage searches must not read them",
    )
    parser.add_argument(
        "--maintenance-work-mem",
        default="4GB",
        help="PostgreSQL's maintenance_work_mem for the index builds (a million edges at 1536 dimensions: 8GB, "
        "so that the edges' HNSW graph is built in memory)",
    )
    parser.add_argument(
        "--data-dir",
        default=str(ROOT / "var" / "bench-pgdata"),
        help="embedded PostgreSQL of the bench (ignored when DATABASE_URL is set)",
    )
    parser.add_argument(
        "--world",
        choices=("synthetic", "realistic"),
        default="synthetic",
        help="realistic: 60 questions over HTTP on bench/realistic_world.py's world (loaded through the API, "
        "kept in var/bench-realistic-pgdata), each about one fact: median, p95, and how often the asked fact "
        "is in the context the LLM is sent (--sizes 2k, 10k, 100k; the other options do not apply)",
    )
    parser.add_argument(
        "--analyzed",
        action="store_true",
        help="with --world realistic: on a copy of each world, ANALYZEd first (the kept world stays as loaded)",
    )
    return parser.parse_args()


def size_of(text: str) -> int:
    return SIZES.get(text.lower()) or int(text.replace("_", ""))


# --- the server and the scratch database -----------------------------------------------------


def database_url(admin: str, name: str) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(admin)
    params["dbname"] = name
    return make_conninfo(**params)


def ensure_database(admin: str, name: str, rebuild: bool) -> tuple[str, bool]:
    """(url, ready): ready when a complete build of this name is already there."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and rebuild:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
            exists = None
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = database_url(admin, name)
    with psycopg.connect(url, autocommit=True) as conn:
        ready = (
            conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE tablename = 'bench_meta') AS t"
            ).fetchone()[0]
            and conn.execute("SELECT count(*) FROM bench_meta WHERE done").fetchone()[0] > 0
        )
    return url, bool(ready)


# --- the synthetic graph ---------------------------------------------------------------------


@dataclass
class DatasetPlan:
    user_id: str
    name: str
    edges: int

    @property
    def entities(self) -> int:
        return max(40, self.edges // 4)

    @property
    def chunks(self) -> int:
        return max(10, self.edges // 50)


class Words:
    """Pseudo-words and a Zipf vocabulary, deterministic."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        pseudo = {self.pseudo_word() for _ in range(6000)}
        self.vocabulary = COMMON_WORDS + sorted(pseudo)[:5000]
        weights = [1 / (rank + 1) ** 1.1 for rank in range(len(self.vocabulary))]
        total = sum(weights)
        self.cumulative = list(itertools_accumulate([w / total for w in weights]))

    def pseudo_word(self) -> str:
        return "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.choice((2, 3, 3))))

    def zipf(self, count: int) -> list[str]:
        from bisect import bisect_left

        return [
            self.vocabulary[min(bisect_left(self.cumulative, self.rng.random()), len(self.vocabulary) - 1)]
            for _ in range(count)
        ]

    def name(self) -> str:
        return f"{self.pseudo_word().capitalize()} {self.pseudo_word().capitalize()}"


def itertools_accumulate(values):
    total = 0.0
    for value in values:
        total += value
        yield total


def unit_gauss(rng: random.Random, dims: int, norm: float) -> list[float]:
    vector = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    scale = norm / math.sqrt(sum(x * x for x in vector))
    return [x * scale for x in vector]


def vector_text(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.5f}" for x in vector) + "]"


UNIFORM_STD = 1 / math.sqrt(12)  # of random() - 0.5
QUESTION_NOISE = 0.3  # |question - centroid|: cosine ~0.96 with its cluster's centroid
ROW_NOISE = (0.4, 1.25)  # |row - centroid|: cosine 0.93 .. 0.62 with it; ~45% above 0.75 with a question


def build(
    url: str, dims: int, plans: list[DatasetPlan], clusters: int, maintenance_work_mem: str, seed: int = 7
) -> dict:
    """Fill the scratch database: schema, synthetic rows, indexes. Returns build timings."""
    import psycopg

    from gligabao.db.migrate import migrate

    rng = random.Random(seed)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn, dims)
        conn.execute("CREATE TABLE IF NOT EXISTS bench_meta (done boolean, clusters int, dims int)")
        conn.execute("DROP TABLE IF EXISTS bench_centroid")
        conn.execute(f"CREATE TABLE bench_centroid (id int PRIMARY KEY, v vector({dims}))")
        with conn.cursor().copy("COPY bench_centroid (id, v) FROM STDIN") as copy:
            for i in range(clusters):
                copy.write_row([i, vector_text(unit_gauss(rng, dims, 1.0))])
        # Each row's own noise is drawn by the server: uniform per dimension, scaled to a norm in ROW_NOISE.
        conn.execute(
            f"""CREATE OR REPLACE FUNCTION pg_temp.noisy(centroid vector, norm float8) RETURNS vector
                LANGUAGE sql VOLATILE AS $$
                    SELECT centroid + (SELECT array_agg((random() - 0.5) * norm / {UNIFORM_STD * math.sqrt(dims)})
                                       FROM generate_series(1, {dims}))::vector
                $$"""
        )
        timings["vectors"] = time.perf_counter() - started

        # Indexes are built once after the load (the same definitions the migrations made).
        index_defs = conn.execute(
            """SELECT indexname, indexdef FROM pg_indexes
               WHERE tablename IN ('gb_entities', 'gb_edges', 'gb_artifacts')
                 AND (indexdef LIKE '%%USING hnsw%%' OR indexdef LIKE '%%USING gin%%')"""
        ).fetchall()
        for name, _ in index_defs:
            conn.execute(f'DROP INDEX "{name}"')

        words = Words(rng)
        load_started = time.perf_counter()
        for plan in plans:
            load_dataset(conn, rng, words, plan, clusters)
        timings["rows"] = time.perf_counter() - load_started

        index_started = time.perf_counter()
        # An HNSW build whose graph outgrows maintenance_work_mem goes on inserting on disk, many times slower.
        conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", [maintenance_work_mem])
        conn.execute("SET max_parallel_maintenance_workers = 2")
        for name, definition in index_defs:
            step = time.perf_counter()
            conn.execute(definition)
            print(f"    index {name}: {time.perf_counter() - step:.0f} s", flush=True)
        conn.execute("VACUUM ANALYZE")
        timings["indexes"] = time.perf_counter() - index_started
        conn.execute("INSERT INTO bench_meta VALUES (true, %s, %s)", [clusters, dims])
    timings["total"] = time.perf_counter() - started
    return timings


def noise_norm(rng: random.Random) -> float:
    return rng.uniform(*ROW_NOISE)


def load_dataset(conn, rng: random.Random, words: Words, plan: DatasetPlan, clusters: int) -> None:
    dataset_id = conn.execute(
        "INSERT INTO gb_datasets (user_id, name) VALUES (%s, %s) RETURNING id", [plan.user_id, plan.name]
    ).fetchone()[0]
    base = datetime(2024, 1, 1, tzinfo=UTC)
    conn.execute("""CREATE TEMP TABLE IF NOT EXISTS staging_entities (
        n int, name text, normalized_name text, type text, description text, cluster int, noise float8,
        updated_at timestamptz)""")
    conn.execute("TRUNCATE staging_entities")
    names: list[str] = []
    seen: set[str] = set()
    with conn.cursor().copy("COPY staging_entities FROM STDIN") as copy:
        while len(names) < plan.entities:
            name = words.name()
            if name.lower() in seen:
                continue
            seen.add(name.lower())
            n = len(names)
            names.append(name)
            description = " ".join(words.zipf(rng.randint(5, 10)))
            copy.write_row(
                [
                    n,
                    name,
                    name.lower(),
                    rng.choice(TYPES),
                    description,
                    rng.randrange(clusters),
                    noise_norm(rng),
                    base + timedelta(minutes=rng.randrange(500_000)),
                ]
            )
    conn.execute(
        """INSERT INTO gb_entities (dataset_id, name, normalized_name, type, description, embedding,
                                    created_at, updated_at)
           SELECT %s, s.name, s.normalized_name, s.type, s.description, pg_temp.noisy(c.v, s.noise),
                  s.updated_at, s.updated_at
           FROM staging_entities s JOIN bench_centroid c ON c.id = s.cluster
           ORDER BY s.n""",
        [dataset_id],
    )
    entity_ids = [
        id_
        for (id_,) in conn.execute(
            "SELECT id FROM gb_entities WHERE dataset_id = %s ORDER BY id", [dataset_id]
        ).fetchall()
    ]

    conn.execute("""CREATE TEMP TABLE IF NOT EXISTS staging_edges (
        source_id bigint, target_id bigint, relation text, description text, cluster int, noise float8,
        created_at timestamptz, expired boolean)""")
    conn.execute("TRUNCATE staging_edges")
    with conn.cursor().copy("COPY staging_edges FROM STDIN") as copy:
        for i in range(plan.edges):
            source = int(len(entity_ids) * rng.random() ** 2)  # hubs: low indexes are sources often
            target = rng.randrange(len(entity_ids))
            relation = rng.choice(RELATIONS)
            description = (
                f"{names[source]} {relation.replace('_', ' ')} {names[target]}, "
                + " ".join(words.zipf(rng.randint(3, 8)))
                + "."
            )
            copy.write_row(
                [
                    entity_ids[source],
                    entity_ids[target],
                    relation,
                    description,
                    rng.randrange(clusters),
                    noise_norm(rng),
                    base + timedelta(seconds=i * 30 + rng.randrange(30)),
                    rng.random() < 0.05,
                ]
            )
    conn.execute(
        """INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, valid_at, invalid_at,
                                 created_at, expired_at, embedding)
           SELECT %s, s.source_id, s.target_id, s.relation, s.description, s.created_at,
                  CASE WHEN s.expired THEN s.created_at + interval '30 days' END, s.created_at,
                  CASE WHEN s.expired THEN s.created_at + interval '30 days' END, pg_temp.noisy(c.v, s.noise)
           FROM staging_edges s JOIN bench_centroid c ON c.id = s.cluster""",
        [dataset_id],
    )

    conn.execute("""CREATE TEMP TABLE IF NOT EXISTS staging_chunks (
        parent int, idx int, text text, summary text, cluster int, noise float8, summary_noise float8)""")
    conn.execute("TRUNCATE staging_chunks")
    parents = [
        conn.execute(
            "INSERT INTO gb_artifacts (dataset_id, kind, text) VALUES (%s, 'text', %s) RETURNING id",
            [dataset_id, "a long text"],
        ).fetchone()[0]
        for _ in range(max(1, plan.chunks // 5))
    ]
    with conn.cursor().copy("COPY staging_chunks FROM STDIN") as copy:
        for i in range(plan.chunks):
            cluster = rng.randrange(clusters)
            copy.write_row(
                [
                    parents[i // 5],
                    i % 5,
                    " ".join(words.zipf(300)),
                    " ".join(words.zipf(40)),
                    cluster,
                    noise_norm(rng),
                    noise_norm(rng),
                ]
            )
    conn.execute(
        """INSERT INTO gb_artifacts (dataset_id, kind, text, parent_id, chunk_index, summary, embedding,
                                     summary_embedding)
           SELECT %s, 'chunk', s.text, s.parent, s.idx, s.summary, pg_temp.noisy(c.v, s.noise),
                  pg_temp.noisy(c.v, s.summary_noise)
           FROM staging_chunks s JOIN bench_centroid c ON c.id = s.cluster""",
        [dataset_id],
    )


# --- the questions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    kind: str  # large, medium, small
    user_id: str
    dataset: str
    question: str
    vector: list[float]


def probes(url: str, plans: list[DatasetPlan], count: int, rng: random.Random) -> list[Probe]:
    """Questions about random live edges: the source's name in a template, the vector near the
    edge's cluster centroid (the centroid plus noise of norm QUESTION_NOISE)."""
    import psycopg
    from pgvector.psycopg import register_vector

    kinds = [("large", plans[0], 0.7), ("medium", plans[1], 0.15), ("small", None, 0.15)]
    found: list[Probe] = []
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        dims = conn.execute("SELECT dims FROM bench_meta LIMIT 1").fetchone()[0]
        # Once per dataset: at a million 1536-dimension edges the table is 8 GB, read whole each time.
        id_range = {
            (user_id, name): (low, high)
            for user_id, name, low, high in conn.execute(
                """SELECT d.user_id, d.name, min(g.id), max(g.id)
                   FROM gb_edges g JOIN gb_datasets d ON d.id = g.dataset_id GROUP BY d.user_id, d.name"""
            )
        }
        for kind, plan, share in kinds:
            for _ in range(max(1, round(count * share))):
                target = plan or rng.choice(plans[2:])
                low, high = id_range[(target.user_id, target.name)]
                row = conn.execute(
                    """SELECT s.name, g.relation, g.embedding
                       FROM gb_edges g JOIN gb_entities s ON s.id = g.source_id
                       WHERE g.id >= %s AND g.id <= %s AND g.expired_at IS NULL
                       ORDER BY g.id LIMIT 1""",
                    [rng.randint(low, high), high],
                ).fetchone()
                if row is None:
                    continue
                name, relation, edge_vector = row
                centroid = nearest_centroid(conn, edge_vector)
                noise = unit_gauss(rng, dims, QUESTION_NOISE)
                vector = [a + b for a, b in zip(centroid, noise, strict=True)]
                template = rng.choice(QUESTIONS)
                question = template.format(
                    name=name, verb=relation.split("_")[0], word=rng.choice(COMMON_WORDS)
                )
                found.append(Probe(kind, target.user_id, target.name, question, vector))
    rng.shuffle(found)
    return found


def nearest_centroid(conn, vector) -> list[float]:
    row = conn.execute("SELECT v FROM bench_centroid ORDER BY v <=> %s LIMIT 1", [vector]).fetchone()
    return [float(x) for x in row[0].to_list()]


# --- measuring ---------------------------------------------------------------------------------


def run_retrieval(probe: Probe, limits):
    """What a query does before its LLM call (memory/query.py): in pipeline mode, BEGIN with the
    keyword statement (which looks the dataset up) while the embedding (the fake provider: instant)
    is computed beside it, then the context statement with COMMIT."""
    from gligabao import bootstrap
    from gligabao.memory.query import embedding_pool
    from gligabao.memory.retrieval import retrieve

    with bootstrap.bundle().database.transaction(probe.user_id, pipeline=True) as uow:
        embedding = embedding_pool().submit(lambda: probe.vector)
        return retrieve(uow, probe.dataset, probe.question, embedding, limits)


def explain(probe: Probe, limits) -> None:
    """EXPLAIN ANALYZE of the probe's keyword and context statements as retrieval sends them (their
    SQL and parameters recorded from one retrieval, then explained in a transaction of the same
    user): each statement's time, and when each of its CTEs is done."""
    import re
    from dataclasses import replace

    from sql_counting import RecordingConnection

    from gligabao import bootstrap
    from gligabao.memory.retrieval import retrieve

    database = bootstrap.bundle().database
    with database.transaction(probe.user_id) as uow:
        recording = RecordingConnection(uow.conn)
        retrieve(
            replace(uow, conn=recording),
            probe.dataset,
            probe.question,
            lambda: probe.vector,
            limits,
        )
    with database.transaction(probe.user_id) as uow:
        for label, (query, params) in zip(("keyword", "context"), recording.sent, strict=True):
            plan = [
                next(iter(row.values())) for row in uow.conn.execute("EXPLAIN (ANALYZE) " + query, params)
            ]
            print(f"  explain, {label} statement: {plan[-1].strip()}")
            for at, line in enumerate(plan[:-1]):
                cte = re.match(r"\s*CTE (\w+)$", line)
                done = (
                    re.search(r"actual time=[0-9.]+\.\.([0-9.]+) rows=(\d+)", plan[at + 1]) if cte else None
                )
                if done:
                    print(
                        f"    CTE {cte.group(1)}: {float(done.group(1)):.2f} ms, its inputs included; "
                        f"{int(done.group(2)):,} rows"
                    )


def p50_p95(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.1f} ms p95 {percentile(values, 0.95):.1f} ms"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def count_round_trips(probe: Probe, limits) -> list[str]:
    """The statements one retrieval sends from this thread, each a round trip."""
    from sql_counting import counting_round_trips

    with counting_round_trips(this_thread_only=True) as counted:
        run_retrieval(probe, limits)
    return counted.statements


def recall(probes_: list[Probe], limits) -> dict[str, tuple[int, int]]:
    """Per kind of hit: (found by the normal path, found by the exact scan) over the probes."""
    exact_limits = limits.model_copy(update={"exact_scan_max_rows": 10**9})
    totals = {"similarity seeds": [0, 0], "similar facts": [0, 0], "passages": [0, 0]}
    for probe in probes_:
        normal, exact = run_retrieval(probe, limits), run_retrieval(probe, exact_limits)
        for key, pick in (
            ("similarity seeds", lambda c: set(c.similarity_seeds)),
            ("similar facts", lambda c: set(c.similar_edges)),
            ("passages", lambda c: {p.artifact_id for p in c.passages}),
        ):
            wanted = pick(exact)
            totals[key][0] += len(pick(normal) & wanted)
            totals[key][1] += len(wanted)
    return {key: (found, wanted) for key, (found, wanted) in totals.items()}


def iterative_scans(url: str, probes_: list[Probe], ef_search: int, exact_max: int) -> None:
    """A dataset whose rows the table's nearest ones crowd out is scanned exactly by the retrieval
    (its edges ordered by distance). pgvector 0.8 can instead go on walking the HNSW index until
    enough rows pass the dataset's filter (`hnsw.iterative_scan`, on a walk that filters as it goes).
    Its 10 nearest edges each way, twice (the first pass warms the cache), against the exact scan,
    and as remember's search for candidate facts finds them (the query's walk of the whole graph,
    as wide as the limit, the dataset's rows kept afterwards)."""
    import psycopg
    from pgvector.psycopg import register_vector

    from gligabao.db.graph_writes import NEAREST_LIVE_EDGES

    exact = """SELECT id FROM gb_edges WHERE dataset_id = %(dataset_id)s AND expired_at IS NULL
               ORDER BY embedding <=> %(vector)s::vector LIMIT %(limit)s"""
    remembers = f"""SELECT near.id FROM (SELECT %(vector)s::vector AS embedding) AS n
                    CROSS JOIN LATERAL {NEAREST_LIVE_EDGES} AS near"""
    filtered = """SELECT id FROM gb_edges WHERE dataset_id = %(dataset_id)s AND expired_at IS NULL
                  ORDER BY gb_half(embedding) <=> gb_half(%(vector)s::vector) LIMIT %(limit)s"""
    with psycopg.connect(url, autocommit=True) as conn:
        dataset_of = {
            probe.dataset: conn.execute(
                "SELECT id FROM gb_datasets WHERE user_id = %s AND name = %s", [probe.user_id, probe.dataset]
            ).fetchone()[0]
            for probe in probes_
        }
    walk = [f"SET LOCAL hnsw.ef_search = {ef_search}", "SET LOCAL enable_sort = off"]
    settings = {  # mode: (statement, settings)
        "exact": (exact, ["SET LOCAL enable_indexscan = off"]),
        "as remember finds them": (remembers, []),
        "strict_order": (filtered, [*walk, "SET LOCAL hnsw.iterative_scan = strict_order"]),
        "relaxed_order": (filtered, [*walk, "SET LOCAL hnsw.iterative_scan = relaxed_order"]),
    }
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        found: dict[str, list[set[int]]] = {}
        times_of: dict[str, list[float]] = {}
        for _ in range(2):
            for mode, (sql, statements) in settings.items():
                times_of[mode], found[mode] = [], []
                for probe in probes_:
                    with conn.transaction():
                        for statement in statements:
                            conn.execute(statement)
                        started = time.perf_counter()
                        rows = conn.execute(
                            sql,
                            {
                                "dataset_id": dataset_of[probe.dataset],
                                "vector": probe.vector,
                                "limit": 10,
                                "exact_max": exact_max,
                            },
                        ).fetchall()
                        times_of[mode].append((time.perf_counter() - started) * 1000)
                        found[mode].append({row[0] for row in rows})
        wanted = sum(len(rows) for rows in found["exact"])
        for mode, sets in found.items():
            hits = sum(len(got & exact) for got, exact in zip(sets, found["exact"], strict=True))
            print(
                f"  medium dataset's 10 nearest edges, {mode}: {p50_p95(times_of[mode])}, "
                f"{sum(map(len, sets)) / len(sets):.2f} rows, "
                f"recall vs the exact scan {hits / wanted:.3f}"
            )


def bench_size(admin: str, edges: int, args) -> None:
    from gligabao import bootstrap
    from gligabao.settings import Settings

    name = f"gligabao_bench_{edges}_d{args.dims}"
    plans = [DatasetPlan("bench-large", "main", edges), DatasetPlan("bench-medium", "main", MEDIUM_EDGES)]
    plans += [DatasetPlan(f"bench-small-{i}", "main", SMALL_EDGES) for i in range(SMALL_DATASETS)]
    clusters = max(50, sum(plan.edges for plan in plans) // 40)
    url, ready = ensure_database(admin, name, args.rebuild)
    print(f"\n== {edges:,} edges (database {name}) ==", flush=True)
    if ready:
        print("  data: reused from an earlier build (--rebuild to build again)")
    else:
        print(f"  building: {len(plans)} datasets, {clusters:,} topic clusters ...", flush=True)
        timings = build(url, args.dims, plans, clusters, args.maintenance_work_mem)
        print(
            "  built in {total:.0f} s (vectors {vectors:.0f} s, rows {rows:.0f} s, indexes {indexes:.0f} s)".format(
                **timings
            ),
            flush=True,
        )
    if args.texts:
        top_up_texts(url, plans[:2], args.texts)
    # Retrieval runs as the service does: as gligabao_app, held by row-level security.
    app_url = service_url(url)
    previous = bootstrap.install(
        bootstrap.Bundle(Settings(database_url=app_url, embedding_dimensions=args.dims))
    )
    if previous is not None:
        previous.database.close()
    describe(url)

    rng = random.Random(edges)
    questions = probes(url, plans, args.queries + 30, rng)
    limits = service_limits()
    for probe in questions[:30]:  # warm-up: connection, plans, caches
        run_retrieval(probe, limits)
    if args.walks_first:
        walks_first([p for p in questions[30:] if p.kind == "large"], limits, COLD_TARGETS_MS.get(edges))
    times: dict[str, list[float]] = {"large": [], "medium": [], "small": []}
    paths: dict[str, dict[str, int]] = {}
    apart: dict[str, list[float]] = {"keyword": [], "after the embedding": []}
    after: dict[str, list[float]] = {
        "the context statement (sent, run, its rows read into the context)": [],
        "the rest": [],
    }
    slowest_keyword = (0.0, None)
    for probe in questions[30:]:
        started = time.perf_counter()
        context = run_retrieval(probe, limits)
        elapsed = (time.perf_counter() - started) * 1000
        times[probe.kind].append(elapsed)
        if probe.kind == "large":
            apart["keyword"].append(context.timings_ms["keyword_seeds"])
            slowest_keyword = max(
                slowest_keyword, (context.timings_ms["keyword_seeds"], probe), key=lambda t: t[0]
            )
            apart["after the embedding"].append(elapsed - context.timings_ms["keyword_seeds"])
            statement = context.timings_ms["search_vectors"]
            after["the context statement (sent, run, its rows read into the context)"].append(statement)
            after["the rest"].append(elapsed - context.timings_ms["keyword_seeds"] - statement)
            for index, path in context.search_paths.items():
                paths.setdefault(index, {}).setdefault(path, 0)
                paths[index][path] += 1
    target = TARGETS_MS.get(edges)
    for kind, values in times.items():
        if not values:
            continue
        label = {
            "large": f"queried dataset ({edges:,} edges)",
            "medium": f"medium dataset ({MEDIUM_EDGES:,} edges)",
            "small": f"small datasets ({SMALL_EDGES} edges)",
        }[kind]
        goal = (
            f"  target p95 < {target:.0f} ms: {'met' if percentile(values, 0.95) < target else 'MISSED'}"
            if kind == "large" and target
            else ""
        )
        print(f"  retrieval {label}: n={len(values)} {p50_p95(values)} max {max(values):.1f} ms{goal}")
    print(
        "  queried dataset, apart: "
        + ", ".join(f"{label} {p50_p95(values)}" for label, values in apart.items() if values)
        + " (the context statement, the COMMIT and the ranking)"
    )
    print(
        "  after the embedding: "
        + ", ".join(f"{label} {p50_p95(values)}" for label, values in after.items() if values)
        + " (the rest: the ranking, in Python)"
    )
    print(
        "  vector search paths (queried dataset): "
        + ", ".join(
            f"{index} {'/'.join(f'{path} {count}' for path, count in sorted(by_path.items()))}"
            for index, by_path in paths.items()
        )
    )
    statements = count_round_trips(questions[0], limits)
    print(
        f"  SQL round trips per retrieval: {len(statements)} "
        "on a warm connection (BEGIN and the user with the keyword statement, the context statement "
        "with COMMIT; the embedding runs beside them)"
    )
    checked = [p for p in questions if p.kind != "small"][: args.recall_queries]
    checked += [p for p in questions if p.kind == "small"][: max(5, args.recall_queries // 6)]
    for kind in ("large", "medium", "small"):
        subset = [p for p in checked if p.kind == kind]
        if not subset:
            continue
        found = recall(subset, limits)
        print(
            f"  recall vs exact scan, {kind} dataset ({len(subset)} questions): "
            + ", ".join(
                f"{key} {hit / wanted:.3f} ({hit}/{wanted})" if wanted else f"{key} n/a (0 above threshold)"
                for key, (hit, wanted) in found.items()
            )
        )
    large = [p for p in checked if p.kind == "large"]
    if args.explain and large:
        explain(large[0], limits)
        print(f"  the question whose keyword statement was slowest: {slowest_keyword[1].question!r}")
        explain(slowest_keyword[1], limits)
    if args.iterative_scans:
        iterative_scans(
            url,
            [p for p in questions if p.kind == "medium"],
            limits.hnsw_candidates,
            limits.exact_scan_max_rows,
        )
    if args.walks:
        walks_in_turns(
            [p for p in questions[30:] if p.kind == "large"],
            limits,
            [walk.strip() for walk in args.walks.split(",") if walk.strip()],
        )
    if args.hops:
        hops_in_turns([p for p in questions[30:] if p.kind == "large"], limits)
    if args.floor:
        floor_in_turns([p for p in questions[30:] if p.kind == "large"], limits, TARGETS_MS.get(edges))
    for ef_search in [int(value) for value in args.ef_sweep.split(",") if value.strip()]:
        walk = {"hnsw_candidates": ef_search, "hnsw_fact_candidates": ef_search}
        found = recall(large, limits.model_copy(update=walk))
        print(
            f"  recall vs exact scan at ef_search {ef_search}, large dataset ({len(large)} questions): "
            + ", ".join(f"{key} {hit}/{wanted}" for key, (hit, wanted) in found.items())
        )


def rotated(items: list, turn: int) -> list:
    """`items` starting at the turn's one: in turns, each goes first as often as the others."""
    return items[turn % len(items) :] + items[: turn % len(items)]


def keyword_and_walks(times: dict[str, list[float]]) -> list[float]:
    """Per question, its keyword statement and its four walks: the least its retrieval costs."""
    return [keyword + walked for keyword, walked in zip(times["keyword"], times["four walks"], strict=True)]


def limits_in_turns(
    questions: list[Probe], variants: dict[str, object], rounds: int = 2
) -> dict[str, list[float]]:
    """The retrieval of each question under each of the `variants` (name: limits), in turns and
    their order rotated, so that a busy moment of the machine weighs on each alike: ms by name."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for turn, probe in enumerate(questions):
            for name in rotated(list(variants), turn):
                started = time.perf_counter()
                run_retrieval(probe, variants[name])
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def walks_in_turns(questions: list[Probe], limits, walks: list[str], rounds: int = 2) -> None:
    """The retrieval of each question at each width of the walks (`candidates:fact_candidates`)."""
    widths = {
        walk: limits.model_copy(
            update=dict(
                zip(("hnsw_candidates", "hnsw_fact_candidates"), map(int, walk.split(":")), strict=True)
            )
        )
        for walk in walks
    }
    for walk, values in limits_in_turns(questions, widths, rounds).items():
        others, facts = walk.split(":")
        print(
            f"  walks of {others} candidates, the facts' {facts}, in turns: n={len(values)} {p50_p95(values)}"
        )


def hops_in_turns(questions: list[Probe], limits, rounds: int = 2) -> None:
    """The retrieval as the service runs it, without its third hop, and without both its hops: what
    the multi-hop retrieval costs (its recall: bench/retrieval_quality.py with the same settings)."""
    variants = {
        "as the service runs it": limits,
        "no third hop (GB_RANK_THIRD_HOP_FRONTIER=0)": limits.model_copy(
            update={"rank_third_hop_frontier": 0}
        ),
        "no hops (GB_RANK_SECOND_HOP_EDGES=0)": limits.model_copy(update={"rank_second_hop_edges": 0}),
    }
    for name, values in limits_in_turns(questions, variants, rounds).items():
        print(f"  retrieval {name}, in turns: n={len(values)} {p50_p95(values)}")


def walk_statement(index) -> str:
    """One index walk as the context statement runs it, its width by the parameter it reads."""
    return f"SELECT count(*) FROM {index.nearest}(%(q)s, %({index.walk})s)"


def index_walks(probe: Probe, limits) -> dict[str, float]:
    """The four index walks alone, at the service's widths, as the context statement runs them (the
    `gb_nearest_*` functions in the user's transaction): ms for all four in one statement ("four
    walks"), then for each alone (by index name)."""
    from pgvector import Vector

    from gligabao import bootstrap
    from gligabao.db.graph_reads import VECTOR_INDEXES, walk_widths

    params = {"q": Vector(probe.vector), **walk_widths(limits)}
    each = {index.name: walk_statement(index) for index in VECTOR_INDEXES}
    statements = {"four walks": "SELECT " + ", ".join(f"({sql})" for sql in each.values()), **each}
    timed: dict[str, float] = {}
    with bootstrap.bundle().database.transaction(probe.user_id) as uow:
        for name, sql in statements.items():
            started = time.perf_counter()
            uow.conn.execute(sql, params).fetchall()
            timed[name] = (time.perf_counter() - started) * 1000
    return timed


def concurrent_walks(probe: Probe, limits, pool) -> float:
    """The four index walks at once, each in its own transaction on its own connection (the pool's
    threads keep theirs, as the service's do): ms until the last one has answered, each
    connection's BEGIN and COMMIT included. The least the
    walks could cost if a query spread them over connections instead of one statement."""
    from pgvector import Vector

    from gligabao import bootstrap
    from gligabao.db.graph_reads import VECTOR_INDEXES, walk_widths

    params = {"q": Vector(probe.vector), **walk_widths(limits)}

    def walk(index) -> None:
        with bootstrap.bundle().database.transaction(probe.user_id) as uow:
            uow.conn.execute(walk_statement(index), params).fetchall()

    started = time.perf_counter()
    for done in [pool.submit(walk, index) for index in VECTOR_INDEXES]:
        done.result()
    return (time.perf_counter() - started) * 1000


def one_wide_walk(probe: Probe, limits) -> float:
    """The facts' walk alone, as wide as the four walks together: what one index of entities, facts
    and passages would cost a question if a single walk found each kind's candidates (a walk's cost
    grows with its width; a mixed walk would need at least the four's widths)."""
    from pgvector import Vector

    from gligabao import bootstrap
    from gligabao.db.graph_reads import VECTOR_INDEXES, walk_widths

    widths = walk_widths(limits)
    facts = next(index for index in VECTOR_INDEXES if index.facts)
    params = {"q": Vector(probe.vector), facts.walk: sum(widths[index.walk] for index in VECTOR_INDEXES)}
    with bootstrap.bundle().database.transaction(probe.user_id) as uow:
        started = time.perf_counter()
        uow.conn.execute(walk_statement(facts), params).fetchall()
        return (time.perf_counter() - started) * 1000


def walks_label(times: dict[str, list[float]], limits) -> str:
    from gligabao.db.graph_reads import VECTOR_INDEXES, walk_widths

    widths = walk_widths(limits)
    each = ", ".join(
        f"{index.name} ({widths[index.walk]}) {p50_p95(times[index.name])}" for index in VECTOR_INDEXES
    )
    return f"each index walk alone: {each}; the four walks in one statement {p50_p95(times['four walks'])}"


def floor_in_turns(questions: list[Probe], limits, target: float | None, rounds: int = 2) -> None:
    """What the retrieval's shape costs at the least, per question and in turns (the order
    rotated): the whole retrieval; the same without its expansion (no first or second hop around
    the seeds: the context is the seeds, the similar facts and the passages); and the four index
    walks alone (`index_walks`). The keyword statement is the whole retrieval's. Only the walks and
    the keyword statement cannot be tuned away without finding less."""
    unexpanded = limits.model_copy(update={"rank_expansion_edges": 0, "rank_second_hop_edges": 0})
    times: dict[str, list[float]] = {}

    def retrieval(probe: Probe, name: str, limits_) -> None:
        started = time.perf_counter()
        context = run_retrieval(probe, limits_)
        times.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        if name == "whole":
            times.setdefault("keyword", []).append(context.timings_ms["keyword_seeds"])

    def walks(probe: Probe) -> None:
        for name, value in index_walks(probe, limits).items():
            times.setdefault(name, []).append(value)

    with ThreadPoolExecutor(max_workers=4) as pool:
        steps = [
            lambda probe: retrieval(probe, "whole", limits),
            lambda probe: retrieval(probe, "without the expansion", unexpanded),
            walks,
            lambda probe: times.setdefault("at once", []).append(concurrent_walks(probe, limits, pool)),
            lambda probe: times.setdefault("one wide walk", []).append(one_wide_walk(probe, limits)),
        ]
        concurrent_walks(questions[0], limits, pool)  # the pool's four connections opened
        for turn in range(rounds * len(questions)):
            probe = questions[turn % len(questions)]
            for step in rotated(steps, turn):
                step(probe)
    floor = keyword_and_walks(times)
    goal = f" (target p95 {target:.0f} ms)" if target else ""
    print(f"  the floor, in turns (n={len(floor)}): {walks_label(times, limits)}")
    print(
        f"    the four walks at once, each on its own connection {p50_p95(times['at once'])}; "
        f"one walk of the facts as wide as the four together {p50_p95(times['one wide walk'])}; "
        f"the keyword statement {p50_p95(times['keyword'])}; it and the four walks {p50_p95(floor)}{goal}; "
        f"the retrieval without the expansion {p50_p95(times['without the expansion'])}; "
        f"the whole retrieval {p50_p95(times['whole'])}"
    )


def walks_first(questions: list[Probe], limits, target: float | None) -> None:
    """For each question on the queried dataset, before anything else reads its rows: the four
    index walks alone (`index_walks`), then its retrieval. Its keyword statement reads the
    entities' name and description indexes and rows, the walks the vector indexes and their
    candidates' rows, so each finds the cache cold for it but for an entity both read. After a
    restart with the OS page cache dropped, the least a question costs from a cold cache: its
    keyword statement and its walks."""
    times: dict[str, list[float]] = {}
    for probe in questions:
        for name, value in index_walks(probe, limits).items():
            times.setdefault(name, []).append(value)
        times.setdefault("keyword", []).append(run_retrieval(probe, limits).timings_ms["keyword_seeds"])
    floor = keyword_and_walks(times)
    goal = f" (target p95 {target:.0f} ms from a cold cache)" if target else ""
    print(
        f"  the walks first, before each question's retrieval (n={len(floor)}): {walks_label(times, limits)}"
    )
    print(
        f"    the keyword statement {p50_p95(times['keyword'])}; it and the four walks {p50_p95(floor)}{goal}"
    )


def service_limits():
    """The limits the service would run with: the defaults, with the environment's `GB_*` settings
    (`GB_HNSW_CANDIDATES=200 python bench/query.py`)."""
    from gligabao.limits import Limits

    return Limits.from_env(dict(os.environ))


def service_url(admin_url: str) -> str:
    """Apply the migrations a reused database lacks (as its owner), then the URL of the service's
    role, gligabao_app (given a password when the server asks for one)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from gligabao.db.migrate import APP_ROLE, migrate, set_role_password

    with psycopg.connect(admin_url, autocommit=True) as conn:
        dims = conn.execute("SELECT dims FROM bench_meta LIMIT 1").fetchone()[0]
        migrate(conn, dims)
        params = {**conninfo_to_dict(admin_url), "user": APP_ROLE}
        if params.get("password"):
            params["password"] = os.urandom(16).hex()
            set_role_password(conn, params["password"])
    return make_conninfo(**params)


def top_up_texts(url: str, plans: list[DatasetPlan], count: int) -> None:
    """Each dataset holds at least `count` unchunked texts, newer than its chunks, as the messages
    an agent remembers after a long document would be."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for plan in plans:
            dataset_id, texts = conn.execute(
                """SELECT d.id, (SELECT count(*) FROM gb_artifacts a
                                 WHERE a.dataset_id = d.id AND a.kind = 'text' AND a.text LIKE 'message %%')
                   FROM gb_datasets d WHERE d.user_id = %s AND d.name = %s""",
                [plan.user_id, plan.name],
            ).fetchone()
            conn.execute(
                """INSERT INTO gb_artifacts (dataset_id, kind, text)
                   SELECT %s, 'text', 'message ' || n FROM generate_series(%s + 1, %s) AS n""",
                [dataset_id, texts, count],
            )
        conn.execute("VACUUM ANALYZE gb_artifacts")


def describe(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            """SELECT (SELECT count(*) FROM gb_edges), (SELECT count(*) FROM gb_entities),
                      (SELECT count(*) FROM gb_artifacts WHERE kind = 'chunk'),
                      (SELECT count(*) FROM gb_artifacts WHERE kind = 'text'),
                      (SELECT count(*) FROM gb_datasets),
                      pg_size_pretty(pg_database_size(current_database())),
                      (SELECT extversion FROM pg_extension WHERE extname = 'vector'),
                      current_setting('server_version'), current_setting('shared_buffers')"""
        ).fetchone()
    print(
        f"  tables: {rows[0]:,} edges, {rows[1]:,} entities, {rows[2]:,} chunks and {rows[3]:,} texts in "
        f"{rows[4]} datasets; database {rows[5]}; PostgreSQL {rows[7]} (shared_buffers {rows[8]}), "
        f"pgvector {rows[6]}"
    )
    with psycopg.connect(url, autocommit=True) as conn:
        sizes = conn.execute(
            """SELECT pg_size_pretty(sum(pg_relation_size(i.indexrelid))),
                      pg_size_pretty(sum(pg_relation_size(i.indexrelid)) FILTER (WHERE i.indrelid = 'gb_edges'::regclass)),
                      pg_size_pretty(pg_total_relation_size('gb_edges') - pg_indexes_size('gb_edges')),
                      pg_size_pretty(pg_total_relation_size('gb_entities') - pg_indexes_size('gb_entities'))
               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
               WHERE am.amname = 'hnsw'"""
        ).fetchone()
    # What a warm cache must hold for the vector searches: the HNSW indexes (half-precision
    # vectors since migration 0019: 2 bytes a dimension, two vectors of 1536 to a page).
    print(
        f"  cache footprint: HNSW indexes {sizes[0]} (edges {sizes[1]}); "
        f"tables with their TOAST: gb_edges {sizes[2]}, gb_entities {sizes[3]}"
    )


def main() -> int:
    args = parse_args()
    sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "tests")]  # the package; the SQL counter
    args.queries = args.queries or (60 if args.world == "realistic" else 300)
    if args.world == "realistic":
        import realistic_world  # bench/realistic_world.py

        sizes = [realistic_world.size_of(text) for text in args.sizes.split(",")]
        realistic_world.query_bench(sizes, args.queries, analyzed=args.analyzed)
        return 0
    from bench_setup import bench_admin_url

    admin = bench_admin_url(args.data_dir)
    limits = service_limits()
    print(
        f"gligabao query retrieval bench: vectors of {args.dims} dimensions (scratch databases migrated "
        f"with GB_EMBEDDING_DIMENSIONS={args.dims}), fake providers answering instantly, "
        f"{os.cpu_count()} cores; exact scan up to {limits.exact_scan_max_rows:,} rows, "
        f"else HNSW with {limits.hnsw_candidates} candidates (ef_search; the facts' "
        f"{limits.hnsw_fact_candidates})"
    )
    for text in args.sizes.split(","):
        bench_size(admin, size_of(text.strip()), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
