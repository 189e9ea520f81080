"""What an eval trajectory costs: remember and query with "eval" off and on, SQL round trips.

What an eval trajectory costs: remember and query timed with "eval" off and on, the SQL round trips
of each, and the cost of the no-op recorder a call without eval gets.

    .venv/bin/python bench/trajectory_overhead.py [--repeat 30]

As bench/remember.py: the test suite's fake providers in this process (real SDKs and HTTP, instant
answers), a scratch database (dropped at the end) on DATABASE_URL's server or on the embedded
PostgreSQL in var/bench-pgdata, the service's role gligabao_app. Off and on runs alternate, so drift
hits both alike; figures are medians (and p90) after warm-up runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

REMEMBER_FACTS = 10  # facts of each remembered text
DATASET_FACTS = 50  # facts in the dataset the queries read
QUESTION = "Who does Person7 know?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30, help="calls per figure (median)")
    args = parser.parse_args()

    import http.server

    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True  # see bench/remember.py
    from bench_setup import bench_admin_url, provider_settings, scratch_database
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = _model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")
    providers = provider_settings(anthropic, openai)
    with scratch_database(bench_admin_url(), providers):
        run_bench(args.repeat)
    anthropic.stop()
    openai.stop()


def _model(body: dict) -> dict:
    """The rule-based model of the tests; for the query stage, an answer citing nothing."""
    from remember_helpers import prompt_of, rule_based_model

    if "<graph>" in prompt_of(body):
        return {"answer": "Person7 knows Person8.", "entities": [], "edges": [], "passages": []}
    return rule_based_model(body)


def _remember(eval_: bool, dataset: str, index: int):
    from remember_helpers import chain_text

    from gligabao import bootstrap
    from gligabao.memory.remember import TextToRemember, remember_text

    text = chain_text(REMEMBER_FACTS, start=index * REMEMBER_FACTS)
    return remember_text(
        bootstrap.bundle(), TextToRemember(user_id="bench", dataset=dataset, text=text, eval=eval_)
    )


def _query(eval_: bool):
    from gligabao import bootstrap
    from gligabao.memory.query import Question, answer

    return answer(bootstrap.bundle(), Question(user_id="bench", query=QUESTION, dataset="query", eval=eval_))


def _timed(call) -> tuple[float, int]:
    from sql_counting import counting_round_trips

    with counting_round_trips() as sql:
        started = time.perf_counter()
        call()
        elapsed = time.perf_counter() - started
    return elapsed * 1000, sql.count


def run_bench(repeat: int) -> None:
    from remember_helpers import chain_text

    from gligabao import bootstrap
    from gligabao.memory.remember import TextToRemember, remember_text

    remember_text(
        bootstrap.bundle(), TextToRemember(user_id="bench", dataset="query", text=chain_text(DATASET_FACTS))
    )
    for warm_up in range(3):
        _remember(False, "warm-up", warm_up)
        _remember(True, "warm-up", 100 + warm_up)
        _query(False)
        _query(True)

    figures: dict[tuple[str, bool], list[tuple[float, int]]] = {}
    for index in range(repeat):
        for eval_ in (False, True) if index % 2 == 0 else (True, False):
            # each remember into a dataset of its own: every run does the same work
            figures.setdefault(("remember", eval_), []).append(
                _timed(lambda e=eval_, i=index: _remember(e, f"r-{i}-{int(e)}", 0))
            )
            figures.setdefault(("query", eval_), []).append(_timed(lambda e=eval_: _query(e)))

    print(f"eval off vs on: {repeat} calls each, alternating; fake providers answer instantly")
    print(
        f"remember: a text of {REMEMBER_FACTS} facts into an empty dataset; query: a dataset of {DATASET_FACTS} facts\n"
    )
    header = f"{'call':<9} {'eval':<5} {'median ms':>9} {'p90 ms':>8} {'SQL trips':>9}"
    print(header)
    print("-" * len(header))
    for call in ("remember", "query"):
        medians = {}
        for eval_ in (False, True):
            runs = figures[(call, eval_)]
            times = sorted(ms for ms, _ in runs)
            medians[eval_] = statistics.median(times)
            trips = statistics.median(count for _, count in runs)
            p90 = times[int(0.9 * (len(times) - 1))]
            print(f"{call:<9} {'on' if eval_ else 'off':<5} {medians[eval_]:>9.2f} {p90:>8.2f} {trips:>9.0f}")
        print(f"{'':<9} {'+':<5} {medians[True] - medians[False]:>9.2f}")

    print("\nthe no-op recorder of a call without eval (every stage line of a remember and a query):")
    from gligabao.memory.trajectory import NO_TRAJECTORY

    recorder = NO_TRAJECTORY
    loops = 200_000
    seconds = timeit.timeit(
        lambda: (
            recorder.chunking(None, None, None),
            recorder.extraction(None),
            recorder.embedding(None),
            recorder.resolution(None, None, None),
            recorder.save_remember(None, 0, None),
            recorder.retrieval(None, None, None),
            recorder.save_query(None, 0, None, None),
        ),
        number=loops,
    )
    print(f"  the 7 calls of a remember and a query: {seconds / loops * 1e6:.2f} µs in all")


if __name__ == "__main__":
    main()
