"""Hostile input for a bounded time: Schemathesis against the local API, failures per endpoint.

The long hostile-input run: Schemathesis against the local API from its OpenAPI document, every
endpoint, every phase and check (tests/fuzz_run.py), round after round with new seeds, until the time
is up. Prints the responses per endpoint and status, and every failure; exits 1 on any failure (a
refused request that changed the database among them, with one client) or a 5xx other than the
documented 501, 502 and 503.

    .venv/bin/python bench/fuzz.py [--minutes 5] [--max-examples 500]

The model providers are the test suite's fakes (real SDKs, real HTTP, a rule-based model), so
remember and query run their whole pipeline; the database is a scratch database (dropped at the end)
on DATABASE_URL's server, else on the embedded PostgreSQL in var/bench-pgdata.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]  # the fake providers, the rule-based model, the fuzz run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="no new round starts after this")
    parser.add_argument(
        "--max-examples", type=int, default=500, help="Hypothesis examples per operation and phase"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the first round (then +1 per round)")
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="worker processes per function, as `gligabao serve --workers N` (the default of serve is 4), "
        "with two concurrent clients; 0: in the server's process, one client",
    )
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=120.0,
        help="after the last round, how long the queued remembers may take to finish",
    )
    args = parser.parse_args()

    import psycopg
    from bench_setup import bench_admin_url, provider_settings, scratch_database
    from fakes.anthropic_server import FakeAnthropic
    from fakes.openai_server import FakeOpenAI
    from fuzz_run import DatabaseWatch, fuzz
    from remember_helpers import rule_based_model

    from gligabao import bootstrap
    from gligabao.local.cli import serve_containers
    from gligabao.local.server import make_server

    anthropic, openai = FakeAnthropic().start(), FakeOpenAI().start()
    anthropic.responder = rule_based_model
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="ERROR")
    providers = provider_settings(anthropic, openai)
    statuses: Counter = Counter()
    failures: list[str] = []
    errors: list[str] = []
    rounds, started = 0, time.monotonic()
    with scratch_database(bench_admin_url(), providers) as scratch:
        # As `gligabao serve --workers N` runs: the same worker processes and job queue (in memory).
        containers, queue = serve_containers(
            bootstrap.bundle(), ROOT / "template.yaml", args.workers, durable_jobs=False
        )
        server = make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True, containers=containers)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base_url = f"http://127.0.0.1:{server.server_address[1]}"
        clients = 2 if args.workers else 1
        # One client: every refused request is also checked to change nothing in the database.
        watch = None if args.workers else DatabaseWatch(psycopg.connect(scratch.owner_url, autocommit=True))
        while time.monotonic() - started < args.minutes * 60:
            report = fuzz(
                base_url,
                max_examples=args.max_examples,
                seed=args.seed + rounds,
                workers=clients,
                database=watch,
            )
            rounds += 1
            statuses.update(report.statuses)
            failures += report.failures
            errors += report.errors
            print(
                f"round {rounds} (seed {args.seed + rounds - 1}): {report.requests} requests in "
                f"{report.seconds:.0f} s, {len(report.failures)} failures",
                flush=True,
            )
        server.shutdown()
        server.server_close()
        drained = queue.wait_until_empty(args.drain_seconds)
        queue.stop()
        containers.close()
        jobs = job_outcomes(scratch.owner_url, queue, drained)
    anthropic.stop()
    openai.stop()
    code = print_report(statuses, failures, errors, rounds, time.monotonic() - started)
    print("\n" + jobs)
    return code or int(bool(queue.dead_letters))


def job_outcomes(owner_url: str, queue, drained: bool) -> str:
    """What became of the remembers: the text artifacts by status (synchronous ones are done at once;
    a failed one with its error), and the dead letters, which only a server-side failure on every
    attempt makes."""
    import psycopg

    with psycopg.connect(owner_url) as conn:
        rows = conn.execute(
            "SELECT status, coalesce(error, ''), count(*) FROM gb_artifacts "
            "WHERE kind IN ('text', 'facts') GROUP BY 1, 2 ORDER BY 3 DESC"
        ).fetchall()
    lines = [f"queued remembers: {queue.delivered} deliveries, {len(queue.dead_letters)} dead letters"]
    if not drained:
        lines.append("  (the queue was not empty when the run ended)")
    lines += [f"  {count:>6} {status}{': ' + error if error else ''}" for status, error, count in rows]
    return "\n".join(lines)


def print_report(
    statuses: Counter, failures: list[str], errors: list[str], rounds: int, seconds: float
) -> int:
    from fuzz_run import DOCUMENTED_SERVER_ERRORS

    total = sum(statuses.values())
    print(f"\n{total} requests in {rounds} rounds, {seconds:.0f} s ({total / seconds:.1f} requests/s)\n")
    by_status: Counter = Counter()
    for (_, status), count in statuses.items():
        by_status[status] += count
    print("status  responses")
    for status, count in sorted(by_status.items()):
        print(f"{status:>6}  {count:>9}")
    print(f"\n{'endpoint':<48} status  responses")
    for (operation, status), count in sorted(statuses.items()):
        print(f"{operation:<48} {status:>6}  {count:>9}")
    undocumented = {
        key: n for key, n in statuses.items() if key[1] >= 500 and str(key[1]) not in DOCUMENTED_SERVER_ERRORS
    }
    print(
        f"\nundocumented 5xx: {sum(undocumented.values())}; failures: {len(failures)}; run errors: {len(errors)}"
    )
    for failure in failures:
        print("\n--- " + failure)
    for error in errors:
        print("\n--- run error: " + error)
    return 1 if failures or errors or undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
