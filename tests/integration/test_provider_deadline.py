"""The Lambda's deadline bounds every provider call (ai/retries.py): with a provider that never
answers, remember and query end in a clean 502 before the function would be killed, with their
error event and their inference rows written and nothing else stored.

The handlers run in-process, as the Lambda runs them, with a context whose remaining time the
test sets (4 s: an attempt gets 4 s less the 2 s margin). The SDKs are imported and their clients
built before: on a cold container the import's second comes out of that time too. What is asserted
is what the calls were given (fakes/attempt_log.py): the deadline, each attempt's timeout and each
socket operation's, not how long the handler took on this machine."""

from __future__ import annotations

import importlib.util
import json
import time
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from fakes.attempt_log import AttemptLog
from fakes.fake_http import Fault
from graph_rows import graph_counts, nothing_stored
from remember_helpers import ROOT, paragraphs, use_rule_based_model

from gligabao.local.server import build_event

REMAINING_S = 4.0
MARGIN_S = 2.0  # what each call keeps after its last attempt, to record the failure and answer


class LambdaContext:
    """The part of the Lambda context the handler reads: the time left, set by the test."""

    def __init__(self, remaining_s: float):
        self._deadline = time.monotonic() + remaining_s
        self.aws_request_id = "req-deadline"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


@dataclass
class Invocation:
    status: int
    json: dict
    lambda_deadline: float  # the monotonic instant the Lambda would have been ended at
    events: list[dict]


def load_handler(function: str):
    spec = importlib.util.spec_from_file_location(
        f"gligabao_function_{function}_deadline_tests", ROOT / "functions" / function / "app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


@pytest.fixture(scope="module")
def handlers():
    return {"remember": load_handler("remember"), "query": load_handler("query")}


@pytest.fixture
def invoke(handlers, capsys, attempts):
    """Call the remember or query handler with `remaining_s` left; its reply, deadline and events
    (and, in `attempts`, its provider calls' only)."""

    def invoke(operation: str, body: dict, remaining_s: float = REMAINING_S) -> Invocation:
        route = SimpleNamespace(path=f"/v1/gb/{operation}", method="ANY")
        event = build_event(
            route,
            {},
            "POST",
            f"/v1/gb/{operation}",
            "",
            {"content-type": "application/json"},
            json.dumps(body).encode(),
            "127.0.0.1",
        )
        capsys.readouterr()
        attempts.clear()
        context = LambdaContext(remaining_s)
        result = handlers[operation](event, context)
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
        events = [line for line in lines if line.get("message") in (f"{operation}.ok", f"{operation}.error")]
        return Invocation(result["statusCode"], json.loads(result["body"]), context._deadline, events)

    return invoke


@pytest.fixture
def models(fake_anthropic, fake_openai):
    from gligabao import bootstrap

    use_rule_based_model(fake_anthropic)
    _ = bootstrap.bundle().llm.client, bootstrap.bundle().embedder.client
    return fake_anthropic, fake_openai


@pytest.fixture
def attempts(monkeypatch) -> AttemptLog:
    return AttemptLog(monkeypatch)


def inferences(db, session_id: str | None = None) -> list[tuple]:
    return db.execute(
        "SELECT type, stage, ok FROM gb_inferences WHERE session_id IS NOT DISTINCT FROM %s ORDER BY id",
        [session_id],
    ).fetchall()


def assert_attempts_end_before_the_lambda(reply: Invocation, attempts: AttemptLog) -> None:
    """Each attempt made had the Lambda's deadline, the time it left less the margin as its
    timeout (the SDK's), and no socket operation that could outlast it: it ended 2 s before."""
    made = attempts.made()
    assert made
    for attempt in made:
        # the Lambda's (to its millisecond: what get_remaining_time_in_millis says), never later
        assert reply.lambda_deadline - 1.0 < attempt.call_deadline <= reply.lambda_deadline
        assert attempt.timeout == pytest.approx(attempt.call_deadline - attempt.asked_at - MARGIN_S)
        assert attempt.ends_by < attempt.call_deadline - MARGIN_S / 2
        attempts.assert_bounded(attempt)


def assert_clean_502(reply: Invocation, operation: str, stage_words: str, attempts: AttemptLog):
    assert reply.status == 502, reply.json
    assert stage_words in reply.json["error"] and "timed out" in reply.json["error"]
    assert_attempts_end_before_the_lambda(reply, attempts)
    [event] = reply.events
    assert (event["event"], event["status"]) == (f"{operation}.error", 502)
    assert "timed out" in event["error"]


REMEMBER = {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "s"}


def test_remember_with_an_llm_that_never_answers_is_a_502_before_the_deadline(db, models, invoke, attempts):
    fake_anthropic, _ = models
    fake_anthropic.inject(Fault.never_answer(), times=3)

    reply = invoke("remember", REMEMBER)

    assert_clean_502(reply, "remember", "LLM call of stage extract", attempts)
    assert len(fake_anthropic.requests) == 1  # no time left for a retry
    assert inferences(db, "s") == [("remember", "extract", False)]
    assert nothing_stored(db)


def test_remember_with_embeddings_that_never_answer_is_a_502_before_the_deadline(
    db, models, invoke, attempts
):
    _, fake_openai = models
    fake_openai.inject(Fault.never_answer(), times=3)

    reply = invoke("remember", REMEMBER)

    assert_clean_502(reply, "remember", "embeddings call", attempts)
    assert inferences(db, "s") == [("remember", "extract", True), ("remember", "embed", False)]
    assert nothing_stored(db)


def test_remember_with_a_resolve_call_that_never_answers_leaves_the_graph_as_it_was(
    db, models, invoke, attempts
):
    fake_anthropic, _ = models
    assert invoke("remember", {"user_id": "u1", "text": "Alice lives in Paris."}).status == 200
    before = graph_counts(db)
    edges_before = db.execute("SELECT id, valid_at, invalid_at, expired_at FROM gb_edges").fetchall()
    fake_anthropic.responder = None
    fake_anthropic.queue(
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Lyon", "type": "place"}],
            "edges": [{"source": "Alice", "target": "Lyon", "relation": "lives_in", "description": "Moved."}],
        }
    )
    fake_anthropic.inject(Fault(), Fault.never_answer())  # the extraction normal, then resolve hangs

    reply = invoke("remember", {"user_id": "u1", "text": "Alice lives in Lyon.", "session_id": "s"})

    assert_clean_502(reply, "remember", "LLM call of stage resolve", attempts)
    assert graph_counts(db) == before
    assert db.execute("SELECT id, valid_at, invalid_at, expired_at FROM gb_edges").fetchall() == edges_before
    assert inferences(db, "s") == [
        ("remember", "extract", True),
        ("remember", "embed", True),
        ("remember", "resolve", False),
    ]


def test_remember_of_a_long_text_with_every_chunk_hanging_is_a_502_before_the_deadline(
    db, models, invoke, attempts
):
    fake_anthropic, _ = models
    fake_anthropic.inject(Fault.never_answer(), times=10)
    text = paragraphs(3, 40)  # three chunks, extracted concurrently

    reply = invoke("remember", {"user_id": "u1", "text": text, "session_id": "s"})

    assert_clean_502(reply, "remember", "LLM call of stage extract", attempts)
    assert inferences(db, "s") == [("remember", "extract", False)] * 3
    assert nothing_stored(db)


def test_remember_with_an_llm_trickling_its_reply_is_a_502_before_the_deadline(db, models, invoke, attempts):
    fake_anthropic, _ = models
    fake_anthropic.inject(Fault.trickle(every_s=0.2), times=3)

    reply = invoke("remember", REMEMBER)

    assert_clean_502(reply, "remember", "LLM call of stage extract", attempts)
    assert inferences(db, "s") == [("remember", "extract", False)]
    assert nothing_stored(db)


def test_with_five_seconds_left_a_hang_gets_one_attempt_of_three_seconds(db, models, invoke, attempts):
    fake_anthropic, _ = models
    fake_anthropic.inject(Fault.never_answer(), times=3)

    reply = invoke("remember", REMEMBER, remaining_s=5.0)

    # 5 s: an attempt of 3 s, then less than a minimal attempt (1 s) and the margin (2 s) left.
    assert_clean_502(reply, "remember", "LLM call of stage extract", attempts)
    [attempt] = attempts.made()
    assert attempt.timeout <= 5.0 - MARGIN_S  # not the configured 60 s
    assert reply.json["error"] == "LLM call of stage extract failed: timed out, no time left to retry"
    assert attempts.waits == []  # no retry was even scheduled
    assert len(fake_anthropic.requests) == 1
    assert nothing_stored(db)


def test_query_with_embeddings_that_never_answer_is_a_502_before_the_deadline(db, models, invoke, attempts):
    _, fake_openai = models
    assert invoke("remember", {"user_id": "u1", "text": "Alice works at Acme."}).status == 200
    fake_openai.inject(Fault.never_answer(), times=3)

    reply = invoke("query", {"user_id": "u1", "query": "Where does Alice work?", "session_id": "s"})

    assert_clean_502(reply, "query", "embeddings call", attempts)
    assert inferences(db, "s") == [("query", "embed", False)]


def test_query_with_an_llm_that_never_answers_is_a_502_before_the_deadline(db, models, invoke, attempts):
    fake_anthropic, _ = models
    assert invoke("remember", {"user_id": "u1", "text": "Alice works at Acme."}).status == 200
    fake_anthropic.inject(Fault.never_answer(), times=3)

    reply = invoke("query", {"user_id": "u1", "query": "Where does Alice work?", "session_id": "s"})

    assert_clean_502(reply, "query", "LLM call of stage query", attempts)
    assert inferences(db, "s") == [("query", "embed", True), ("query", "query", False)]


def test_with_less_time_left_than_a_minimal_attempt_no_call_is_made(db, models, invoke, attempts):
    fake_anthropic, _ = models

    reply = invoke("remember", REMEMBER, remaining_s=2.5)

    assert reply.status == 502
    assert reply.json == {"error": "LLM call of stage extract not made: no time left before the deadline"}
    assert fake_anthropic.requests == []
    assert attempts.made() == [] and len(attempts.not_made) == 1  # refused by the policy, not cut
    assert inferences(db, "s") == [("remember", "extract", False)]
    assert reply.events[0]["event"] == "remember.error"
