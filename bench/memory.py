"""Peak resident memory of each function, as a Lambda container reports it ("Max Memory Used").

Peak resident memory of the functions, as a Lambda container reports it ("Max Memory Used"):
each case runs in a fresh Python process that loads the function's handler from its directory
(the Lambda init) and invokes it with API Gateway (or SQS) events; it prints the resident memory
after the init and the process's peak (VmHWM) after the invocations.

    python bench/memory.py [--text-mib 1.0]

Cases:
  datasets          the datasets of the user listed twice (the functions that call no model load the
                    same composition root: datasets, sessions, graph, forget, system)
  query             two queries (the second warm) on a dataset of 50 facts
  remember          a synchronous remember of the largest synchronous text (24,000 characters)
  remember 1 MiB    the remember function receiving a 1 MiB text: it stores the pending artifact
                    and queues the job (the asynchronous path, which any text above 24,000
                    characters takes)
  worker 1 MiB      the remember worker running that job: ~290 chunks extracted, one embeddings
                    request, the store

The providers are the test suite's fakes in this process (instant answers, the rule-based model);
the database is a scratch database (1536-dimension vectors) on DATABASE_URL's server, else the
embedded PostgreSQL in var/bench-pgdata.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT / "tests")]  # the package; the fakes

USER = "memory-bench"
CASES = ("datasets", "query", "remember", "remember-1mib", "worker-1mib")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-mib", type=float, default=1.0, help="the large text, in MiB")
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)

    from load import scratch_database, start_fakes  # bench/load.py: the same fakes and scratch database

    anthropic, openai = start_fakes(0.0, 0.0)
    scratch = scratch_database()
    with scratch as database_url:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "layers" / "core"),
            "DATABASE_URL": database_url,
            "ANTHROPIC_API_KEY": "sk-ant-memory",
            "ANTHROPIC_BASE_URL": anthropic.url,
            "OPENAI_API_KEY": "sk-memory",
            "OPENAI_BASE_URL": f"{openai.url}/v1",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "ERROR",
            "MEMORY_BENCH_TEXT_MIB": str(args.text_mib),
        }
        _seed(database_url, anthropic.url, f"{openai.url}/v1")
        job = ROOT / "var" / f"memory-bench-job-{os.getpid()}.json"
        print(
            f"gligabao memory: peak resident memory per function invocation, fresh process each, "
            f"Python {sys.version.split()[0]}, fake providers"
        )
        print(f"  {'case':16} {'after init':>11} {'peak':>9}  invocations")
        for case in CASES:
            report = run_child(case, env, job)
            print(
                f"  {case:16} {report['init_mib']:8.0f} MiB {report['peak_mib']:6.0f} MiB  {report['what']}",
                flush=True,
            )
        job.unlink(missing_ok=True)
    anthropic.stop()
    openai.stop()
    return 0


def run_child(case: str, env: dict, job: Path) -> dict:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, __file__, "--child", case, "--job", str(job)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{case} failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["what"] += f" ({time.monotonic() - started:.0f} s)"
    return report


# --- a case, in its own process ------------------------------------------------------------------


def child(args) -> int:
    from gligabao.local.containers import FunctionCode, LambdaContext, load_handler

    directory = {
        "datasets": "datasets",
        "query": "query",
        "remember": "remember",
        "remember-1mib": "remember",
    }.get(args.child, "remember_worker")
    handler = load_handler(FunctionCode(directory, ROOT / "functions" / directory, "app.handler"))
    init_mib = _rss_mib()
    context = LambdaContext(directory, "memory-bench", 300_000)
    if args.child == "datasets":
        statuses = [
            str(handler(_api_event("/v1/gb/datasets", None, f"user_id={USER}"), context)["statusCode"])
            for _ in range(2)
        ]
        what = "2 lists: " + ", ".join(statuses)
    elif args.child == "query":
        what = []
        for _ in range(2):
            reply = handler(
                _api_event("/v1/gb/query", {"user_id": USER, "query": "Where does Person1 work?"}), context
            )
            what.append(str(reply["statusCode"]))
        what = "2 queries: " + ", ".join(what)
    elif args.child == "remember":
        text = " ".join(f"Person{i % 40} works at Company{i % 12}." for i in range(1000))[:24_000]
        reply = handler(_api_event("/v1/gb/remember", {"user_id": USER, "text": text}), context)
        what = f"{len(text):,} characters: {reply['statusCode']}"
    elif args.child == "remember-1mib":
        from gligabao import bootstrap

        captured = []

        class CapturedQueue:  # the job the function queues, for the worker's case
            def enqueue(self, group, messages):
                captured.extend((group, dedup, body) for dedup, body in messages)

            def retry_after(self, receipt, seconds):
                pass

        bootstrap.bundle().use_job_queue(CapturedQueue())
        text = _large_text(float(os.environ["MEMORY_BENCH_TEXT_MIB"]))
        reply = handler(_api_event("/v1/gb/remember", {"user_id": USER, "text": text}), context)
        Path(args.job).write_text(json.dumps(captured[0]))
        what = f"{len(text.encode()) / 2**20:.2f} MiB text: {reply['statusCode']}, job queued"
    else:
        from gligabao.local.job_queue import QueuedMessage, sqs_record

        group, dedup, body = json.loads(Path(args.job).read_text())
        message = QueuedMessage(group, dedup, body, receive_count=1, receipt="memory-bench")
        reply = handler({"Records": [sqs_record(message)]}, context)
        chunks = _chunks_stored()
        what = f"the job: {len(reply.get('batchItemFailures', []))} failed, {chunks} chunks stored"
    peak_mib = _status_mib("VmHWM")  # not ru_maxrss: Linux carries it over from the parent through exec
    print(json.dumps({"init_mib": init_mib, "peak_mib": peak_mib, "what": what}))
    return 0


def _rss_mib() -> float:
    return _status_mib("VmRSS")


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _api_event(path: str, body: dict | None, query: str = "") -> dict:
    from gligabao.local.server import LocalApi, build_event

    api = LocalApi(ROOT / "template.yaml")
    method = "POST" if body is not None else "GET"
    route, params = api.find_route(method, path)
    raw = json.dumps(body).encode() if body is not None else b""
    headers = {"content-type": "application/json"} if body is not None else {}
    return build_event(route, params, method, path, query, headers, raw, "127.0.0.1")


def _large_text(mib: float) -> str:
    sentences, size, i = [], 0, 0
    while size < mib * 2**20 - 2_000:  # the body's JSON around it stays under the 1 MiB limit
        sentence = f"Person{i % 400} works at Company{i % 120} in City{i % 90} since {1990 + i % 35}. "
        sentences.append(sentence)
        size += len(sentence)
        i += 1
    return "".join(sentences)


def _seed(database_url: str, anthropic_url: str, openai_url: str) -> None:
    """50 facts in the user's dataset, remembered by this (the parent) process."""
    from pydantic import SecretStr

    from gligabao import bootstrap
    from gligabao.memory.remember import TextToRemember, remember_text
    from gligabao.settings import Settings

    settings = Settings(
        database_url=database_url,
        anthropic_api_key=SecretStr("sk-ant-memory"),
        anthropic_base_url=anthropic_url,
        openai_api_key=SecretStr("sk-memory"),
        openai_base_url=openai_url,
    )
    bootstrap.install(bootstrap.Bundle(settings))
    text = " ".join(f"Person{i} works at Company{i % 12}." for i in range(50))
    remember_text(bootstrap.bundle(), TextToRemember(user_id=USER, dataset="main", text=text))
    bootstrap.bundle().database.close()


def _chunks_stored() -> int:
    from gligabao import bootstrap

    with bootstrap.bundle().database.transaction(USER) as uow:
        return uow.conn.execute("SELECT count(*) AS n FROM gb_artifacts WHERE kind = 'chunk'").fetchone()["n"]


if __name__ == "__main__":
    sys.exit(main())
