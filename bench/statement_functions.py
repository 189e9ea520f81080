"""The query's statements against their statement functions, prepared and unprepared (RDS Proxy).

The query's two statements sent as they are against their statement functions (migration 0038,
db/statement_functions.py), prepared as the local API prepares them and unprepared as a deployment
behind RDS Proxy sends them; with --plan-cache-modes, the statements themselves under each
`plan_cache_mode`; with --hops, the context function as the service calls it, without its third
hop, and without both its hops (the multi-hop retrieval's own cost).

    .venv/bin/python bench/statement_functions.py [--world small|realistic] [--sizes 10k,100k]
                                                   [--questions 40] [--rounds 3] [--plan-cache-modes]
                                                   [--as-of] [--hops]

The statements are those `retrieve` sends for each question (recorded, then sent again on one
connection per variant, in turns, each variant in each place in turn after an unmeasured run that
brings the question's pages into the cache; the first round is not counted): on the
small graph of bench/overhead.py (one question, on a scratch database of var/bench-pgdata), or on
bench/realistic_world.py's worlds (`--questions` of its questions, the kept worlds of
var/bench-realistic-pgdata, migrated first). Prints the median and p95 of the keyword statement,
the context statement and both, in ms. With --as-of the questions are asked as of a day after the
run (every fact valid then): the context statement is the one of FACTS_VALID_AT (its own function).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

MODES = ("auto", "force_generic_plan", "force_custom_plan")
KINDS = ("keyword", "context")


class Recording:
    """A connection that keeps what `retrieve` sends: each call as sent, and the statement it runs."""

    def __init__(self, conn):
        self._conn = conn
        self.calls: list[tuple[object, object]] = []

    def execute(self, query, params=None):
        if query != b"COMMIT":
            self.calls.append((query, params))
        return self._conn.execute(query, params)


def recorded(
    bundle, user: str, dataset: str, questions: list[tuple[str, list[float]]], as_of: datetime | None = None
) -> list[dict]:
    """Per question: {"function": [(call, params)...], "statement": [(statement, params)...]}."""
    from gligabao.db.graph_reads import unwrapped
    from gligabao.limits import DEFAULT_LIMITS
    from gligabao.memory.retrieval import retrieve

    sent = []
    for text, vector in questions:
        with bundle.database.transaction(user) as uow:
            recording = Recording(uow.conn)
            retrieve(
                replace(uow, conn=recording),
                dataset,
                text,
                lambda vector=vector: vector,
                DEFAULT_LIMITS,
                as_of=as_of,
            )
        calls = recording.calls[-2:]  # the keyword and context statements (the series check goes first)
        sent.append({"function": calls, "statement": [unwrapped(query, params) for query, params in calls]})
    return sent


def timed_in_turns(url: str, user: str, variants: dict[str, tuple], sent: list[dict], rounds: int):
    """{(variant, kind): [ms]}; `variants`: name -> (connection options, which of a question's
    recordings it sends, `plan_cache_mode` or None, the context statement's parameters it changes)."""
    import psycopg
    from psycopg.rows import dict_row

    from gligabao.db.connection import register_vector

    connections = {}
    for name, (options, _, mode, _) in variants.items():
        conn = psycopg.connect(url, row_factory=dict_row, **options)
        register_vector(conn)
        if mode:
            conn.execute(f"SET plan_cache_mode = {mode}")
        connections[name] = conn
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    try:
        for round_ in range(rounds):
            for index, question in enumerate(sent):
                # each variant in each place in turn, after an unmeasured run that reads the
                # question's pages into the cache (else the first place pays for them)
                names = list(variants)
                shift = (round_ + index) % len(names)
                order = [names[0], *names[shift:], *names[:shift]]
                for place, name in enumerate(order):
                    conn, (_, which, _, changed) = connections[name], variants[name]
                    with conn.transaction():
                        conn.execute("SELECT set_config('gligabao.user_id', %s, true)", [user])
                        both = 0.0
                        for kind, (query, params) in zip(KINDS, question[which], strict=True):
                            params = {**params, **changed} if kind == "context" else params
                            started = time.perf_counter()
                            conn.execute(query, params).fetchall()
                            ms = (time.perf_counter() - started) * 1000
                            both += ms
                            if round_ and place:
                                times[(name, kind)].append(ms)
                        if round_ and place:
                            times[(name, "both")].append(both)
    finally:
        for conn in connections.values():
            conn.close()
    return times


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def print_times(title: str, times: dict[tuple[str, str], list[float]]) -> None:
    print(title)
    for name in dict.fromkeys(name for name, _ in times):
        parts = [
            f"{kind} {statistics.median(times[(name, kind)]):6.2f} / {percentile(times[(name, kind)], 0.95):6.2f}"
            for kind in (*KINDS, "both")
        ]
        print(f"  {name:<32} " + ", ".join(parts) + " ms (p50 / p95)")


# The context statement's hops (db/graph_reads.py, _SECOND_HOP): no third hop when its frontier is 0,
# neither hop when the second hop takes no facts (GB_RANK_THIRD_HOP_FRONTIER, GB_RANK_SECOND_HOP_EDGES).
HOPS = {
    "as the service calls it": {},
    "no third hop": {"third_frontier": 0},
    "no hops": {"second_hop": 0},
}


def variants_of(plan_cache_modes: bool, hops: bool = False) -> dict[str, tuple]:
    if hops:
        return {name: ({"prepare_threshold": 5}, "function", None, changed) for name, changed in HOPS.items()}
    if plan_cache_modes:
        return {f"statement, {mode}": ({"prepare_threshold": 0}, "statement", mode, {}) for mode in MODES}
    return {
        "prepared statement": ({"prepare_threshold": 5}, "statement", None, {}),
        "prepared function": ({"prepare_threshold": 5}, "function", None, {}),
        "unprepared statement": ({"prepare_threshold": None}, "statement", None, {}),
        "unprepared function": ({"prepare_threshold": None}, "function", None, {}),
    }


@contextlib.contextmanager
def small_graph() -> Iterator[tuple[object, str, str, list[tuple[str, list[float]]]]]:
    import overhead
    from fakes.openai_server import hashed_bag_of_words

    from gligabao import bootstrap

    with overhead.bench_service():
        bundle = bootstrap.bundle()
        vector = hashed_bag_of_words(overhead.QUESTION, bundle.settings.embedding_dimensions)
        yield bundle, "bench", "small", [(overhead.QUESTION, vector)]


@contextlib.contextmanager
def realistic(size: int, count: int) -> Iterator[tuple[object, str, str, list[tuple[str, list[float]]]]]:
    import realistic_world as world

    admin = world.admin_url()
    name = world.ensure_world(admin, size)
    asked = world.questions(world.generate(size), count)
    with contextlib.ExitStack() as stack:
        _, openai, settings = stack.enter_context(world.fake_providers())
        url = world.database_url(admin, name)
        bundle = stack.enter_context(world.service_on(url, settings, migrate_first=True))
        dims = bundle.settings.embedding_dimensions
        yield bundle, world.USER, world.DATASET, [(q.text, openai.vector(q.text, dims)) for q in asked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", choices=("small", "realistic"), default="small")
    parser.add_argument("--sizes", default="10k,100k", help="with --world realistic")
    parser.add_argument("--questions", type=int, default=40, help="with --world realistic")
    parser.add_argument("--rounds", type=int, default=3, help="the first is not counted")
    parser.add_argument("--plan-cache-modes", action="store_true", help="the statements under each mode")
    parser.add_argument("--as-of", action="store_true", help="asked as of a day after the run")
    parser.add_argument("--hops", action="store_true", help="the context function without its hops, in turns")
    args = parser.parse_args()
    variants = variants_of(args.plan_cache_modes, args.hops)
    if args.world == "small":
        worlds = [("the small graph of bench/overhead.py", lambda: small_graph())]
        rounds = max(args.rounds, 30)  # one question: more rounds for as many samples
    else:
        import realistic_world as world

        sizes = [world.size_of(text) for text in args.sizes.split(",")]
        worlds = [
            (f"the realistic world, {size:,} facts", lambda size=size: realistic(size, args.questions))
            for size in sizes
        ]
        rounds = args.rounds
    for title, opened in worlds:
        with opened() as (bundle, user, dataset, questions):
            as_of = datetime.now(UTC) + timedelta(days=1) if args.as_of else None
            sent = recorded(bundle, user, dataset, questions, as_of)
            times = timed_in_turns(bundle.database.url(), user, variants, sent, rounds)
        asked = ", as of a day later" if args.as_of else ""
        print_times(f"{title}: {len(questions)} question(s){asked}, {rounds - 1} rounds counted", times)


if __name__ == "__main__":
    main()
