"""Over HTTP through the local API: a provider that never answers makes remember and query end in
a clean 502 before the Lambda's time is up, with the inference rows written and nothing stored.

The local API gives each invocation the Lambda's remaining time like API Gateway's 30 s; here the
test shortens it to 5 s (`LOCAL_TIMEOUT_MS`), so the test does not wait half a minute. What is
asserted is what the call was given (fakes/attempt_log.py): its deadline, its attempt's timeout and
each socket operation's, not how long the request took on this machine."""

from __future__ import annotations

import time

import pytest
from fakes.attempt_log import AttemptLog
from fakes.fake_http import Fault
from graph_rows import nothing_stored
from remember_helpers import remember, use_rule_based_model

from gligabao import bootstrap

REMAINING_MS = 5_000
MARGIN_S = 2.0


@pytest.fixture
def five_second_lambda(monkeypatch):
    monkeypatch.setattr("gligabao.local.server.LOCAL_TIMEOUT_MS", REMAINING_MS)


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    _ = bootstrap.bundle().llm.client, bootstrap.bundle().embedder.client  # imported before the timing
    return fake_anthropic, fake_openai


@pytest.fixture
def attempts(monkeypatch) -> AttemptLog:
    return AttemptLog(monkeypatch)


def assert_one_attempt_ending_before_the_lambda(attempts: AttemptLog, sent: float, answered: float) -> None:
    """One attempt, under the invocation's deadline (5 s after the request arrived), its timeout the
    time left less the 2 s margin (the SDK's), no socket operation able to outlast it; no retry."""
    [attempt] = attempts.made()
    assert sent + REMAINING_MS / 1000 - 1.0 < attempt.call_deadline <= answered + REMAINING_MS / 1000
    assert attempt.timeout == pytest.approx(attempt.call_deadline - attempt.asked_at - MARGIN_S)
    assert attempt.ends_by < attempt.call_deadline - MARGIN_S / 2
    attempts.assert_bounded(attempt)
    assert attempts.waits == []  # too little time left after it for a retry: none scheduled


def test_remember_with_an_llm_that_never_answers_is_a_502_before_the_lambda_ends(
    api, db, models, five_second_lambda, attempts
):
    fake_anthropic, fake_openai = models
    fake_anthropic.inject(Fault.never_answer(), times=3)

    sent = time.monotonic()
    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "s"})
    answered = time.monotonic()

    assert reply.status == 502
    assert reply.json == {"error": "LLM call of stage extract failed: timed out, no time left to retry"}
    assert_one_attempt_ending_before_the_lambda(attempts, sent, answered)  # of 5 s less the 2 s margin
    assert db.execute("SELECT type, stage, ok, error FROM gb_inferences").fetchall() == [
        ("remember", "extract", False, "LLM call of stage extract failed: timed out, no time left to retry")
    ]
    assert nothing_stored(db)
    assert fake_openai.requests == []


def test_query_with_embeddings_that_never_answer_is_a_502_before_the_lambda_ends(
    api, db, models, five_second_lambda, attempts
):
    _, fake_openai = models
    remember(api, "Alice works at Acme.")
    fake_openai.inject(Fault.never_answer(), times=3)
    attempts.clear()  # the remember's

    sent = time.monotonic()
    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?", "session_id": "q"})
    answered = time.monotonic()

    assert reply.status == 502
    assert reply.json == {"error": "embeddings call failed: timed out, no time left to retry"}
    assert_one_attempt_ending_before_the_lambda(attempts, sent, answered)
    assert db.execute("SELECT type, stage, ok FROM gb_inferences WHERE session_id = 'q'").fetchall() == [
        ("query", "embed", False)
    ]
