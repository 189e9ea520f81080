"""How long a remember or query takes to answer 502 when a provider never answers.

How long a remember or query takes to answer 502 when a provider never answers (or trickles its
reply a byte at a time), against the Lambda's remaining time: the deadline at work.

    .venv/bin/python bench/provider_deadline.py [--remaining 5,10,29]

The remember and query handlers run in-process, as the Lambda runs them, with a Lambda context
giving each invocation the remaining time; the providers are the test suite's fakes, the SDKs
imported and their clients built before the timing. Prints, per remaining time and fault, the
time to the 502 and what was left of the Lambda's time when it was answered.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]


class LambdaContext:
    def __init__(self, remaining_s: float):
        self._deadline = time.monotonic() + remaining_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--remaining", default="5,10,29", help="the Lambda's remaining seconds, comma-separated"
    )
    args = parser.parse_args()
    remaining = [float(value) for value in args.remaining.split(",")]

    from bench_setup import bench_admin_url, provider_settings, scratch_database
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from remember_helpers import rule_based_model

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = rule_based_model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="CRITICAL")
    providers = provider_settings(anthropic, openai)
    admin_url = bench_admin_url()
    with scratch_database(admin_url, providers) as scratch:
        run_bench(scratch.bundle, anthropic, openai, remaining)
    anthropic.stop()
    openai.stop()


def run_bench(bundle, anthropic, openai, remaining: list[float]) -> None:
    from fakes.fake_http import Fault
    from remember_helpers import rule_based_model

    handlers = {name: load_handler(name) for name in ("remember", "query")}
    _ = bundle.llm.client, bundle.embedder.client
    known = invoke(handlers["remember"], "remember", {"user_id": "bench", "text": "Alice works at Acme."}, 60)
    assert known[0] == 200, known
    faults = [
        ("remember", "LLM never answers (extract)", anthropic, Fault.never_answer()),
        ("remember", "embeddings never answer", openai, Fault.never_answer()),
        ("remember", "LLM sends a byte every 0.5 s", anthropic, Fault.trickle(every_s=0.5)),
        ("query", "LLM never answers (query)", anthropic, Fault.never_answer()),
    ]
    print(
        "| Lambda time left | operation | provider fault | answer | attempts | time to answer | left when answered |"
    )
    print("| - | - | - | - | - | - | - |")
    for seconds in remaining:
        for operation, label, server, fault in faults:
            server.reset()  # no fault left over, no request recorded (and the responder unset)
            anthropic.responder = rule_based_model
            server.inject(fault, times=5)
            body = (
                {"user_id": "bench", "text": "Bob works at Initech."}
                if operation == "remember"
                else {"user_id": "bench", "query": "Where does Alice work?"}
            )
            status, error, elapsed = invoke(handlers[operation], operation, body, seconds)
            attempts = len(server.requests)
            print(
                f"| {seconds:g} s | {operation} | {label} | {status} | {attempts} | {elapsed:.2f} s"
                f" | {seconds - elapsed:.2f} s |",
                flush=True,
            )
            assert status == 502, error
            server.reset()


def load_handler(function: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f"bench_{function}", ROOT / "functions" / function / "app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


def invoke(handler, operation: str, body: dict, remaining_s: float) -> tuple[int, str | None, float]:
    from gligabao.local.server import build_event

    route = SimpleNamespace(path=f"/v1/gb/{operation}", method="ANY")
    event = build_event(
        route, {}, "POST", f"/v1/gb/{operation}", "", {"content-type": "application/json"},
        json.dumps(body).encode(), "127.0.0.1",
    )  # fmt: skip
    started = time.monotonic()
    result = handler(event, LambdaContext(remaining_s))
    elapsed = time.monotonic() - started
    return result["statusCode"], json.loads(result["body"]).get("error"), elapsed


if __name__ == "__main__":
    main()
