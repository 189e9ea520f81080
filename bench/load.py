"""Throughput, latency, errors and server memory under concurrent clients of the local API.

Load: concurrent clients drive the local API (`gligabao serve`, a process of its own) with a mix
of remembers and queries for a bounded time, against fake providers with realistic latency.

Prints throughput, p50/p95/p99 per operation, errors by status, and the server's resident memory
over the run (sampled every second), so that a leak or a deadlock shows.

    python bench/load.py [--clients 32] [--seconds 60] [--remember-share 0.3] [--workers N]

`--workers` is passed to `gligabao serve` (its default when not given); the memory is the server's
and its worker processes' together.

Only loopback traffic: the API, the fake providers and the embedded PostgreSQL are on this machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "tests")]  # the package; the fakes

USERS = 8
PEOPLE, COMPANIES, CITIES = 40, 12, 10


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--remember-share", type=float, default=0.3, help="share of remembers in the mix")
    parser.add_argument("--llm-ms", type=float, default=400.0, help="latency of each fake LLM reply")
    parser.add_argument("--embed-ms", type=float, default=60.0, help="latency of each fake embeddings reply")
    parser.add_argument("--workers", type=int, default=None, help="gligabao serve --workers (its default)")
    parser.add_argument("--server-log", default=None, help="a file for the server's output (else discarded)")
    args = parser.parse_args()

    anthropic, openai = start_fakes(args.llm_ms / 1000, args.embed_ms / 1000)
    scratch = scratch_database()
    with (
        scratch as database_url,
        local_api(
            database_url, scratch.owner_url, anthropic.url, openai.url, args.workers, args.server_log
        ) as (port, pid),
    ):
        print(
            f"gligabao load: {args.clients} clients for {args.seconds:.0f} s, {args.remember_share:.0%} remember, "
            f"fake LLM {args.llm_ms:.0f} ms, fake embeddings {args.embed_ms:.0f} ms, {os.cpu_count()} cores, "
            f"serve --workers {'(default)' if args.workers is None else args.workers}",
            flush=True,
        )
        for user in range(USERS):  # every user has a dataset before the clock starts: no 404 by design
            status, body = _call(
                port,
                "POST",
                "/v1/gb/remember",
                {"user_id": f"load-user-{user}", "text": "Person0 works at Company0."},
                None,
            )
            assert status == 200, body
        warm_up(port, args.workers)
        results, memory = drive(port, pid, args)
    anthropic.stop()
    openai.stop()
    return report(results, memory, args)


def warm_up(port: int, workers: int | None) -> None:
    """As many concurrent remembers and queries as the server has workers per function, before the
    clock starts: every worker has loaded its handler and the provider SDKs (their cold start)."""
    from gligabao.local.containers import DEFAULT_WORKERS

    count = DEFAULT_WORKERS if workers is None else max(1, workers)
    calls = [
        ("/v1/gb/remember", {"user_id": "load-user-0", "text": "Person1 works at Company1."}),
        ("/v1/gb/query", {"user_id": "load-user-0", "query": "Where does Person1 work?"}),
    ] * count
    threads = [threading.Thread(target=_call, args=(port, "POST", path, body)) for path, body in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# --- the fakes, with latency --------------------------------------------------------------------


def start_fakes(llm_s: float, embed_s: float):
    from fakes.anthropic_server import FakeAnthropic, Reply
    from fakes.openai_server import FakeOpenAI
    from remember_helpers import prompt_of, rule_based_model

    def responder(body: dict) -> Reply:
        if "<graph>" in prompt_of(body):  # the query stage: cite nothing, answer briefly
            return Reply(data={"answer": "From memory.", "entities": [], "edges": []}, delay_s=llm_s)
        return Reply(data=rule_based_model(body), delay_s=llm_s)

    class SlowOpenAI(FakeOpenAI):
        def handle(self, request):
            time.sleep(embed_s)
            return super().handle(request)

    anthropic, openai = FakeAnthropic().start(), SlowOpenAI().start()
    anthropic.responder = responder
    threading.Thread(target=_forget_recorded, args=(anthropic, openai), daemon=True).start()
    return anthropic, openai


def _forget_recorded(*servers) -> None:
    """The fakes record every request (for tests); a long run must not grow the bench's memory."""
    while True:
        time.sleep(5)
        for server in servers:
            with server.lock:
                server.requests.clear()


# --- the database and the server ------------------------------------------------------------------


class scratch_database:
    """A database of its own, with the schema, dropped at the end."""

    def __enter__(self) -> str:
        import psycopg
        from psycopg import sql
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        from gligabao.db.connection import Database
        from gligabao.db.migrate import APP_ROLE, ensure_schema
        from gligabao.local.embedded_pg import embedded_database_url

        self.admin = embedded_database_url(str(ROOT / "var" / "bench-pgdata"))
        self.name = f"gligabao_load_{os.getpid()}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.name)))
        url = make_conninfo(**{**conninfo_to_dict(self.admin), "dbname": self.name})
        database = Database(lambda: url)
        ensure_schema(database, 1536)
        database.close()
        # The API connects as the service does: as gligabao_app, held by row-level security
        # (trusted on the embedded PostgreSQL's socket); it migrates as the owner.
        self.owner_url = url
        return make_conninfo(**{**conninfo_to_dict(url), "user": APP_ROLE})

    def __exit__(self, *exc) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name)))


class local_api:
    """`gligabao serve` in a process of its own, configured as a user would: by its environment."""

    def __init__(
        self,
        database_url: str,
        owner_url: str,
        anthropic_url: str,
        openai_url: str,
        workers: int | None,
        log: str | None = None,
    ):
        self.workers, self.log = workers, log
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "layers" / "core"),
            "DATABASE_URL": database_url,
            "GB_MIGRATION_DATABASE_URL": owner_url,
            "ANTHROPIC_API_KEY": "sk-ant-load",
            "ANTHROPIC_BASE_URL": anthropic_url,
            "OPENAI_API_KEY": "sk-load",
            "OPENAI_BASE_URL": f"{openai_url}/v1",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "ERROR",
        }

    def __enter__(self) -> tuple[int, int]:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        command = [sys.executable, "-m", "gligabao.local.cli", "serve", "--port", str(port)]
        if self.workers is not None:
            command += ["--workers", str(self.workers)]
        output = open(self.log, "w") if self.log else subprocess.DEVNULL  # closed with the process
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if _call(port, "GET", "/v1/gb/health", None)[0] == 200:
                    return port, self.process.pid
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the local API did not start")

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


# --- the clients ---------------------------------------------------------------------------------


def _call(
    port: int, method: str, path: str, body: dict | None, conn: http.client.HTTPConnection | None = None
):
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, payload, {"content-type": "application/json"} if payload else {})
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        if own:
            conn.close()


def a_text(rng: random.Random) -> str:
    person, other = rng.randrange(PEOPLE), rng.randrange(PEOPLE)
    return rng.choice(
        [
            f"Person{person} works at Company{rng.randrange(COMPANIES)}.",
            f"Person{person} lives in City{rng.randrange(CITIES)}.",
            f"Person{person} knows Person{other}.",
            f"Person{person} moved to City{rng.randrange(CITIES)} in {rng.randrange(2015, 2026)}.",
        ]
    )


def a_question(rng: random.Random) -> str:
    return rng.choice(
        [
            f"Where does Person{rng.randrange(PEOPLE)} work?",
            f"Who lives in City{rng.randrange(CITIES)}?",
            f"Whom does Person{rng.randrange(PEOPLE)} know?",
        ]
    )


def drive(port: int, pid: int, args) -> tuple[list[tuple[str, int, float]], list[tuple[float, int]]]:
    results: list[tuple[str, int, float]] = []
    lock = threading.Lock()
    started = time.monotonic()
    stop_at = started + args.seconds

    def client(index: int) -> None:
        rng = random.Random(index)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.monotonic() < stop_at:
            user = f"load-user-{rng.randrange(USERS)}"
            if rng.random() < args.remember_share:
                op, body = "remember", {"user_id": user, "text": a_text(rng), "session_id": f"s{index}"}
            else:
                op, body = "query", {"user_id": user, "query": a_question(rng)}
            began = time.perf_counter()
            try:
                status, _ = _call(port, "POST", f"/v1/gb/{op}", body, conn)
            except OSError as error:
                status = f"connection: {type(error).__name__}"
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            with lock:
                results.append((op, status, time.perf_counter() - began))
        conn.close()

    memory: list[tuple[float, int]] = []
    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(args.clients)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        memory.append((time.monotonic() - started, _rss_kib(pid)))
        time.sleep(1)
        if time.monotonic() > stop_at + 180:
            print("clients still running 3 minutes after the end: a deadlock?", flush=True)
            break
    return results, memory


def _rss_kib(pid: int) -> int:
    """The resident memory of `pid` and of its descendants (the worker processes)."""
    total = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += _rss_kib(int(child))
    except (FileNotFoundError, ProcessLookupError):  # a worker that just stopped
        pass
    return total


# --- the report ----------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def report(results, memory, args) -> int:
    by_op = defaultdict(list)
    statuses = Counter()
    for op, status, seconds in results:
        statuses[(op, status)] += 1
        if status == 200:
            by_op[op].append(seconds * 1000)
    total = len(results)
    errors = sum(count for (_, status), count in statuses.items() if status != 200)
    print(f"requests: {total} in {args.seconds:.0f} s = {total / args.seconds:.1f}/s; errors: {errors}")
    for op in ("remember", "query"):
        times = by_op[op]
        if times:
            print(
                f"  {op:8} n={len(times):5}  p50 {percentile(times, 0.5):7.0f} ms  p95 {percentile(times, 0.95):7.0f} ms"
                f"  p99 {percentile(times, 0.99):7.0f} ms  mean {statistics.fmean(times):7.0f} ms"
            )
    for (op, status), count in sorted(statuses.items(), key=str):
        if status != 200:
            print(f"  {op} -> {status}: {count}")
    if memory:
        rss = [kib for _, kib in memory]
        third = max(1, len(rss) // 3)
        print(
            f"server and workers memory (RSS): start {rss[0] / 1024:.0f} MiB, max {max(rss) / 1024:.0f} MiB, "
            f"end {rss[-1] / 1024:.0f} MiB; mean of the first third {statistics.fmean(rss[:third]) / 1024:.0f} MiB, "
            f"of the last third {statistics.fmean(rss[-third:]) / 1024:.0f} MiB"
        )
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
