"""How long large and bulk ingestion take through the asynchronous path, providers taking 1-3 s.

Large and bulk ingestion through the asynchronous path: a 200 KB document (one async remember)
and a batch of 100 texts (POST /v1/gb/remember/batch), with fake providers that answer after 1 to
3 seconds per call, as real models do.

    .venv/bin/python bench/ingest.py [--document-kb 200] [--texts 100]
    GB_ASYNC_PREPARE_AHEAD=0 .venv/bin/python bench/ingest.py   # the service's GB_* limits apply
    GB_BULK_WINDOW_TEXTS=1 .venv/bin/python bench/ingest.py --document-kb 0   # one text at a time
    GB_EXTRACT_CONCURRENCY=16 .venv/bin/python bench/ingest.py --document-kb 0 --texts 1000

A batch of more than 100 texts is sent as requests of 100 (the route's most), one after the other.
The batch's row also gives the LLM calls and the tokens (input + output, from gb_inferences) per text.

The requests go through the remember function's handler (202 at once); the local runtime's queue
(`gligabao serve`'s, in-process) drains them with the worker handler the Lambda runs, one job at
a time, as one dataset's message group is on SQS FIFO. Wall time runs from the request to the
last job done. The database is a scratch database (bench/remember.py's), as gligabao_app.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]  # the fakes; bench/remember.py's scratch database

LATENCY_S = (1.0, 3.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--document-kb", type=int, default=200, help="size of the document, in KB; 0: none")
    parser.add_argument("--texts", type=int, default=100, help="texts of the batch")
    parser.add_argument("--seed", type=int, default=7, help="of the latencies")
    args = parser.parse_args()
    random.seed(args.seed)

    import http.server

    http.server.BaseHTTPRequestHandler.disable_nagle_algorithm = True
    # A provider takes many connections at once: the fakes' listen backlog is not the bottleneck
    # (the default 5 resets connections when a window extracts its texts together).
    http.server.ThreadingHTTPServer.request_queue_size = 256
    from bench_setup import bench_admin_url, provider_settings, scratch_database
    from fakes.anthropic_server import FakeAnthropic, Reply
    from fakes.openai_server import FakeOpenAI
    from remember_helpers import rule_based_model

    class SlowOpenAI(FakeOpenAI):
        def handle(self, request):
            return replace(super().handle(request), delay_s=random.uniform(*LATENCY_S))

    anthropic, openai = FakeAnthropic().start(), SlowOpenAI().start()
    anthropic.responder = lambda body: Reply(data=rule_based_model(body), delay_s=random.uniform(*LATENCY_S))
    os.environ.update(POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="ERROR")
    from gligabao.limits import Limits

    # The service's GB_* limits, as on Lambda (GB_ASYNC_PREPARE_AHEAD=0: one text at a time).
    providers = {**provider_settings(anthropic, openai), "limits": Limits.from_env(dict(os.environ))}
    admin_url = bench_admin_url()
    try:
        with scratch_database(admin_url, providers) as scratch:
            run(scratch.bundle, anthropic, openai, args.document_kb, args.texts)
    finally:
        anthropic.stop()
        openai.stop()


def document(kb: int) -> str:
    """About `kb` KB of paragraphs, each stating one fact among filler sentences."""
    from remember_helpers import FILLER

    paragraphs, size, i = [], 0, 0
    while size < kb * 1000:
        paragraph = " ".join([f"Person{i} knows Person{i + 1}."] + [FILLER] * 5)
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
        i += 1
    return "\n\n".join(paragraphs)


def batch(count: int) -> list[dict]:
    """`count` short texts, sent newest first: each says where Alice lives, a year apart; the
    queue must apply them oldest first for the last one to be the live fact."""
    return [
        {
            "text": f"Alice lives in City{i}. Person{i} works at Company{i}.",
            "reference_time": f"{1900 + i}-01-01T00:00:00Z",
            "session_id": f"s{i}",
        }
        for i in reversed(range(count))
    ]


def run(bundle, anthropic, openai, document_kb: int, texts: int) -> None:
    from remember_helpers import remember_handler

    from gligabao.api.worker import create_worker
    from gligabao.local.job_queue import LocalJobQueue

    queue = LocalJobQueue(create_worker(), max_attempts=bundle.limits.async_max_attempts)
    bundle.use_job_queue(queue)
    handler = remember_handler()
    limits = bundle.limits
    print(
        f"ingest: asynchronous remember, fake providers answering in {LATENCY_S[0]:.0f}-{LATENCY_S[1]:.0f} s,"
        f" texts prepared ahead: {limits.async_prepare_ahead}, window: {limits.bulk_window_texts} texts,"
        f" extract concurrency: {limits.extract_concurrency}"
    )
    print(f"{'what':<28} {'wall s':>7} {'accept ms':>9} {'LLM calls':>9} {'embed req':>9} {'throughput':>22}")
    try:
        if document_kb > 0:
            _document(bundle, queue, handler, anthropic, openai, document_kb)
        _batch(bundle, queue, handler, anthropic, openai, texts)
    finally:
        queue.stop()


def _document(bundle, queue, handler, anthropic, openai, document_kb: int) -> None:
    from remember_helpers import call_handler

    text = document(document_kb)
    anthropic.requests.clear()
    openai.requests.clear()
    started = time.perf_counter()
    reply = call_handler(handler, {"user_id": "bench", "dataset": "document", "text": text, "async": True})
    accepted = time.perf_counter() - started
    assert reply.status == 202, reply.json
    assert queue.wait_until_empty(3600)
    wall = time.perf_counter() - started
    _check_done(bundle, [reply.json["artifact_id"]])
    _row(
        f"document {len(text) / 1000:.0f} KB",
        wall,
        accepted,
        anthropic,
        openai,
        f"{len(text) / 1000 / wall:.1f} KB/s",
    )


def _batch(bundle, queue, handler, anthropic, openai, texts: int) -> None:
    from remember_helpers import call_handler

    anthropic.requests.clear()
    openai.requests.clear()
    # Requests of 100 (the route's most), oldest first as `gligabao import` sends them: the queue
    # applies a request's texts in order of reference time, and the requests in the order sent.
    oldest_first, ids = list(reversed(batch(texts))), []
    started = time.perf_counter()
    for start in range(0, texts, 100):
        request = list(reversed(oldest_first[start : start + 100]))  # each sent newest first
        body = {"user_id": "bench", "dataset": "batch", "texts": request}
        reply = call_handler(handler, body, path="/v1/gb/remember/batch")
        assert reply.status == 202, reply.json
        ids += [a["artifact_id"] for a in reply.json["artifacts"]]
    accepted = time.perf_counter() - started
    assert queue.wait_until_empty(3600)
    wall = time.perf_counter() - started
    _check_done(bundle, ids)
    _check_latest_lives(bundle, texts)
    _row(f"batch of {texts} texts", wall, accepted, anthropic, openai, f"{texts / wall:.2f} texts/s")
    calls, tokens = _llm_use(bundle)
    print(f"{'':<28} LLM calls per text {calls / texts:.2f}, tokens per text {tokens / texts:.0f}")


def _llm_use(bundle) -> tuple[int, int]:
    """The LLM calls of the batch's dataset and their tokens, input and output, as recorded."""
    with bundle.database.transaction("bench", "batch") as uow:
        row = uow.conn.execute(
            """SELECT count(*) AS calls, coalesce(sum(input_tokens + output_tokens), 0) AS tokens
               FROM gb_inferences WHERE dataset_id = %s AND stage IN ('extract', 'resolve')""",
            [uow.dataset_id],
        ).fetchone()
    return row["calls"], row["tokens"]


def _row(what, wall, accepted, anthropic, openai, throughput) -> None:
    print(
        f"{what:<28} {wall:>7.1f} {accepted * 1000:>9.0f} {len(anthropic.messages):>9} "
        f"{len(openai.embedding_requests):>9} {throughput:>22}"
    )


def _check_done(bundle, ids: list[int]) -> None:
    with bundle.database.transaction("bench") as uow:
        rows = uow.conn.execute("SELECT status, error FROM gb_artifacts WHERE id = ANY(%s)", [ids]).fetchall()
    assert [r["status"] for r in rows] == ["done"] * len(ids), rows


def _check_latest_lives(bundle, texts: int) -> None:
    """Alice's live home is the one of the newest text: the batch was applied oldest first."""
    with bundle.database.transaction("bench", "batch") as uow:
        live = uow.conn.execute(
            """SELECT t.name FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id
               JOIN gb_entities t ON t.id = e.target_id
               WHERE e.dataset_id = %s AND s.name = 'Alice' AND e.relation = 'lives_in'
                 AND e.expired_at IS NULL AND e.invalid_at IS NULL""",
            [uow.dataset_id],
        ).fetchall()
    assert [r["name"] for r in live] == [f"City{texts - 1}"], live


if __name__ == "__main__":
    main()
