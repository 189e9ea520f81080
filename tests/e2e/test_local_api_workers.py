"""`gligabao serve --workers N`: each function's handler in worker processes that stay warm as Lambda
containers do (their database connection kept across requests), concurrent requests served
concurrently, and asynchronous remembers through the server's job queue."""

from __future__ import annotations

import functools
import threading

import pytest
from conftest import ROOT
from http_client import LocalApiClient
from job_helpers import artifact_status
from remember_helpers import prompt_of, rule_based_model
from sql_counting import count_round_trips_into, counting_round_trips, statements_in

from gligabao import bootstrap
from gligabao.local.server import make_server

QUESTION = {"user_id": "u1", "query": "Where does Alice work?"}


def answering(body: dict) -> dict:
    """The rule-based model, which also answers a question (citing nothing)."""
    if "<graph>" in prompt_of(body):
        return {"answer": "Alice works at Acme.", "entities": [], "edges": [], "passages": []}
    return rule_based_model(body)


@pytest.fixture
def serve_with_workers(db, tmp_path):
    """Start `gligabao serve --workers size` with the CLI's own wiring (the test's settings, the local
    job queue in memory); its workers record their SQL statements in a file. Yields a starter."""
    from gligabao.local.cli import serve_containers

    started = []

    def start(size: int):
        statements = str(tmp_path / "statements.jsonl")
        pools, queue = serve_containers(
            bootstrap.bundle(),
            ROOT / "template.yaml",
            size,
            durable_jobs=False,
            setup=functools.partial(count_round_trips_into, statements),
        )
        server = make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True, containers=pools)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append((server, pools, queue))
        return LocalApiClient(f"http://127.0.0.1:{server.server_address[1]}"), pools, queue, statements

    yield start
    for server, pools, queue in started:
        server.shutdown()
        server.server_close()
        queue.stop()
        pools.close()
    bootstrap.bundle().use_job_queue(None)


def test_the_second_query_through_the_local_api_costs_the_warm_round_trips(api, models, serve_with_workers):
    models[0].responder = answering
    assert api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."}).status == 200
    api.post("/v1/gb/query", QUESTION)  # the in-process container, warmed
    with counting_round_trips() as warm:
        assert api.post("/v1/gb/query", QUESTION).status == 200
    served, _, _, statements = serve_with_workers(1)

    assert served.post("/v1/gb/query", QUESTION).status == 200
    cold = len(statements_in(statements))
    assert served.post("/v1/gb/query", QUESTION).status == 200
    second = len(statements_in(statements)) - cold

    assert second == warm.count, statements_in(statements)[cold:]
    assert cold > second  # the first request connected (and looked the vector type up)


def test_concurrent_requests_to_the_local_api_run_concurrently(db, models, serve_with_workers):
    fake_anthropic, _ = models
    both_waiting = threading.Barrier(2, timeout=20)
    overlapping = []

    def responder(body: dict):
        try:
            both_waiting.wait()  # returns only when the other request's model call is in flight too
            overlapping.append(True)
        except threading.BrokenBarrierError:
            overlapping.append(False)
        return rule_based_model(body)

    fake_anthropic.responder = responder
    served, pools, _, _ = serve_with_workers(2)
    texts = ["Alice works at Acme.", "Bob lives in Paris."]
    replies = [None, None]

    def remember(index: int) -> None:
        replies[index] = served.post("/v1/gb/remember", {"user_id": f"u{index}", "text": texts[index]})

    threads = [threading.Thread(target=remember, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert [reply.status for reply in replies] == [200, 200], [reply.json for reply in replies]
    assert overlapping == [True, True]
    remember_code = next(c for c in pools._pools if c.code_uri.name == "remember")
    assert pools.workers(remember_code) == 2


def test_an_asynchronous_remember_through_the_workers_is_done_by_the_server_queue(
    db, models, serve_with_workers
):
    served, _, queue, _ = serve_with_workers(1)

    reply = served.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme.", "async": True})

    assert reply.status == 202, reply.json
    assert queue.wait_until_empty(60)
    assert artifact_status(db, reply.json["artifact_id"]) == ("done", None)
    names = db.execute("SELECT name FROM gb_entities ORDER BY name").fetchall()
    assert [name for (name,) in names] == ["Acme", "Alice"]
