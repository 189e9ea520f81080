"""What an Idempotency-Key costs a remember, and a replay: SQL round trips and milliseconds.

What an Idempotency-Key costs a remember, and what a replay costs: SQL round trips and
milliseconds through the remember handler (the one the Lambda runs), in-process.

    .venv/bin/python bench/idempotency.py [--repeat 20]

The providers are the test suite's fakes (instant answers from the rule-based model), the
database a scratch one, as in bench/remember.py. Each run remembers "Alice works at Acme." into
a new dataset without a key, then with a key, then retries that request (a replay), then sends
the key with another body (a 409). Figures are medians over --repeat runs, after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="runs per figure (median)")
    args = parser.parse_args()

    import http.server

    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True  # see bench/remember.py
    from bench_setup import bench_admin_url, provider_settings, scratch_database
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from remember_helpers import remember_handler, rule_based_model

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = rule_based_model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="WARNING")
    providers = provider_settings(anthropic, openai)
    with scratch_database(bench_admin_url(), providers):
        handler = remember_handler()
        run(handler, "warm-up")
        runs = [run(handler, f"bench-{i}") for i in range(args.repeat)]
    anthropic.stop()
    openai.stop()

    print(f"remember through its handler: median of {args.repeat} runs; fake providers answer instantly\n")
    header = f"{'request':<28} {'status':>6} {'SQL trips':>9} {'ms':>7}"
    print(header)
    print("-" * len(header))
    for name in runs[0]:
        figures = [r[name] for r in runs]
        status, trips = figures[0]["status"], figures[0]["round_trips"]
        assert all(f["status"] == status and f["round_trips"] == trips for f in figures)
        ms = statistics.median(f["ms"] for f in figures)
        print(f"{name:<28} {status:>6} {trips:>9} {ms:>7.1f}")


def run(handler, dataset: str) -> dict[str, dict]:
    body = {"user_id": "bench", "dataset": dataset, "text": "Alice works at Acme."}
    key = {"idempotency-key": f"key-{dataset}"}
    return {
        "without a key": call(handler, {**body, "dataset": f"{dataset}-plain"}, {}),
        "with a key (first)": call(handler, body, key),
        "retry (replayed)": call(handler, body, key),
        "the key, another body (409)": call(handler, {**body, "text": "Bob works at Acme."}, key),
    }


def call(handler, body: dict, headers: dict) -> dict:
    from types import SimpleNamespace

    from sql_counting import counting_round_trips

    from gligabao.local.server import LambdaContext, build_event

    route = SimpleNamespace(path="/v1/gb/remember", method="POST")
    headers = {"content-type": "application/json", **headers}
    event = build_event(
        route, {}, "POST", "/v1/gb/remember", "", headers, json.dumps(body).encode(), "127.0.0.1"
    )
    with counting_round_trips() as sql:
        started = time.perf_counter()
        response = handler(event, LambdaContext("remember", "bench"))
        ms = (time.perf_counter() - started) * 1000
    return {"status": response["statusCode"], "round_trips": sql.count, "ms": ms}


if __name__ == "__main__":
    main()
