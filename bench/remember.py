"""What one remember costs us: LLM calls, embeddings requests, SQL round trips, ms, for 1, 10 and 50 facts.

    .venv/bin/python bench/remember.py [--repeat 5] [--sizes 1,10,50] [--statements]
    .venv/bin/python bench/remember.py --world realistic [--sizes 2k,10k,100k] [--repeat 5] [--analyzed]

`--world realistic`: a remember of 50 new facts about the people and projects of bench/realistic_world.py's
world at each size (its kept database copied, the copy remembered into): wall time, SQL round trips and
the PostgreSQL CPU seconds of the bench's own cluster, and the ratio of the largest size to the smallest.

`--statements`: also the SQL time of each round trip of the last run of each remember.

The model providers are the test suite's fakes, started in this process (real SDKs, real HTTP,
instant answers from a rule-based model), so the milliseconds are our own work: the SDKs and
HTTP, the SQL, and the Python in between. The database is a scratch database (dropped at the
end) on DATABASE_URL's server, else on the embedded PostgreSQL in var/bench-pgdata.

Each size runs three remembers in a dataset of its own: into the new dataset; new facts about
the stored entities (the resolve stage judges them); facts contradicting those (superseding them).
Figures are medians over --repeat runs, after one warm-up run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]  # the fakes and the rule-based model

from bench_setup import bench_admin_url, provider_settings, scratch_database  # noqa: E402

SIZES = (1, 10, 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    parser.add_argument(
        "--sizes",
        default=None,
        help="facts per text, comma-separated (default 1,10,50); with --world realistic, facts of the "
        "world (default 2k,10k,100k)",
    )
    parser.add_argument("--statements", action="store_true", help="the time of each round trip too")
    parser.add_argument("--world", choices=("synthetic", "realistic"), default="synthetic")
    parser.add_argument(
        "--analyzed", action="store_true", help="with --world realistic: the world's copy ANALYZEd first"
    )
    args = parser.parse_args()
    if args.world == "realistic":
        import realistic_world  # bench/realistic_world.py

        worlds = [realistic_world.size_of(text) for text in (args.sizes or "2k,10k,100k").split(",")]
        realistic_world.remember_bench(worlds, args.repeat, analyzed=args.analyzed)
        return
    args.sizes = args.sizes or ",".join(map(str, SIZES))

    import http.server

    # The fakes answer through http.server, which writes headers and body separately; with Nagle's
    # algorithm on, the client's delayed ACK then holds every small reply ~40 ms. Off, so that
    # "instant" is instant and the figures are our overhead.
    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from remember_helpers import rule_based_model

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = rule_based_model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")
    providers = provider_settings(anthropic, openai)
    admin_url = bench_admin_url()
    with scratch_database(admin_url, providers):
        run_bench(anthropic, openai, args.repeat, [int(n) for n in args.sizes.split(",")], args.statements)
    anthropic.stop()
    openai.stop()


@contextlib.contextmanager
def indexes_dropped(owner_url: str, names: list[str]):
    """The named indexes dropped, then built again from their own definitions (as the migrations
    made them) when the block ends."""
    import psycopg

    with psycopg.connect(owner_url, autocommit=True) as conn:
        definitions = [
            row[0]
            for row in conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [names])
        ]
        for name in names:
            conn.execute(f'DROP INDEX "{name}"')
    try:
        yield
    finally:
        with psycopg.connect(owner_url, autocommit=True) as conn:
            for definition in definitions:
                conn.execute(definition)


def scenario(facts: int) -> list[tuple[str, str]]:
    from remember_helpers import chain_text

    return [
        ("new dataset", chain_text(facts)),
        ("new facts", " ".join(f"Person{i} lives in City{i}." for i in range(facts))),
        ("contradictions", " ".join(f"Person{i} moved to Town{i} in 2024." for i in range(facts))),
    ]


def measure(anthropic, openai, facts: int, dataset: str) -> list[dict]:
    """The figures of each remember of the scenario, in a new dataset."""
    from sql_counting import counting_round_trips

    from gligabao import bootstrap
    from gligabao.ai.embeddings import Embedder
    from gligabao.ai.llm import LLM
    from gligabao.memory.remember import TextToRemember, remember_text

    figures = []
    for step, text in scenario(facts):
        anthropic.requests.clear()
        openai.requests.clear()
        provider = _ProviderTimer(LLM, Embedder)
        with provider, counting_round_trips() as sql:
            started = time.perf_counter()
            body = remember_text(
                bootstrap.bundle(),
                TextToRemember(user_id="bench", dataset=dataset, text=text, session_id="s"),
            )
            total = time.perf_counter() - started
        figures.append(
            {
                "facts": facts,
                "step": step,
                "llm_calls": len(anthropic.messages),
                "embedding_requests": len(openai.embedding_requests),
                "round_trips": sql.count,
                "total_ms": total * 1000,
                "sql_ms": sql.sql_seconds * 1000,
                "provider_ms": provider.seconds * 1000,
                "edges": len(body.edges),
                "superseded": len(body.superseded),
                "statements": list(zip(sql.statements, sql.seconds_each, strict=True)),
            }
        )
    return figures


class _ProviderTimer:
    """Time spent inside LLM.complete and Embedder.embed (the SDKs and HTTP to the fakes)."""

    def __init__(self, *classes):
        self.seconds = 0.0
        self.targets = [
            (cls, name) for cls in classes for name in ("complete", "embed") if hasattr(cls, name)
        ]
        self.originals = {}

    def __enter__(self):
        for cls, name in self.targets:
            original = self.originals[(cls, name)] = getattr(cls, name)

            def timed(*args, _original=original, **kwargs):
                started = time.perf_counter()
                try:
                    return _original(*args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - started

            setattr(cls, name, timed)
        return self

    def __exit__(self, *exc):
        for (cls, name), original in self.originals.items():
            setattr(cls, name, original)


def run_bench(anthropic, openai, repeat: int, sizes: list[int], statements: bool) -> None:
    measure(anthropic, openai, 10, "warm-up")  # imports, SDK clients, connections
    print(f"remember: median of {repeat} runs per figure; fake providers answer instantly\n")
    header = (
        f"{'facts':>5}  {'remember':<15} {'LLM calls':>9} {'embed req':>9} {'SQL trips':>9} "
        f"{'total ms':>9} {'SQL ms':>7} {'SDK+HTTP ms':>11} {'other ms':>8}"
    )
    print(header)
    print("-" * len(header))
    breakdowns = []
    for facts in sizes:
        runs = [measure(anthropic, openai, facts, f"bench-{facts}-{i}") for i in range(repeat)]
        for index, (step, _) in enumerate(scenario(facts)):
            figures = [run[index] for run in runs]
            first = figures[0]
            assert all(f["edges"] == facts for f in figures), "the rule-based model extracted other facts"

            medians = {
                key: statistics.median(f[key] for f in figures)
                for key in ("total_ms", "sql_ms", "provider_ms")
            }
            other = statistics.median(f["total_ms"] - f["sql_ms"] - f["provider_ms"] for f in figures)
            print(
                f"{facts:>5}  {step:<15} {first['llm_calls']:>9} {first['embedding_requests']:>9} "
                f"{first['round_trips']:>9} {medians['total_ms']:>9.1f} {medians['sql_ms']:>7.1f} "
                f"{medians['provider_ms']:>11.1f} {other:>8.1f}"
            )
            breakdowns.append((facts, step, figures[-1]["statements"]))
    if statements:
        for facts, step, trips in breakdowns:
            print(f"\n{facts} facts, {step}: {len(trips)} round trips (the last run)")
            for text, seconds in trips:
                print(f"  {seconds * 1000:7.2f} ms  {' '.join(text.split())[:110]}")
    print("\nSQL trips: statements plus BEGIN/COMMIT, counted in psycopg. SDK+HTTP: inside the LLM and")
    print("embeddings clients (request building, HTTP to the local fakes, reply parsing). other: the rest")
    print("of our Python (prompts, merging, resolution, response).")


if __name__ == "__main__":
    main()
