"""Over HTTP through the local API: a provider that never answers makes remember and query end in
a clean 502 before the Lambda's time is up, with the inference rows written and nothing stored.

The local API gives each invocation the Lambda's remaining time like API Gateway's 30 s; here the
test shortens it to 5 s (`LOCAL_TIMEOUT_MS`), so the test does not wait half a minute."""

from __future__ import annotations

import time

import pytest
from fakes.fake_http import Fault
from graph_rows import nothing_stored
from remember_helpers import remember, use_rule_based_model

from gligabao import bootstrap

REMAINING_MS = 5_000


@pytest.fixture
def five_second_lambda(monkeypatch):
    monkeypatch.setattr("gligabao.local.server.LOCAL_TIMEOUT_MS", REMAINING_MS)


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    _ = bootstrap.bundle().llm.client, bootstrap.bundle().embedder.client  # imported before the timing
    return fake_anthropic, fake_openai


def test_remember_with_an_llm_that_never_answers_is_a_502_before_the_lambda_ends(
    api, db, models, five_second_lambda
):
    fake_anthropic, fake_openai = models
    fake_anthropic.inject(Fault.never_answer(), times=3)

    started = time.monotonic()
    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "s"})
    elapsed = time.monotonic() - started

    assert reply.status == 502
    assert reply.json == {"error": "LLM call of stage extract failed: timed out, no time left to retry"}
    assert elapsed < REMAINING_MS / 1000 - 1.5  # one attempt of 5 s less the 2 s margin
    assert db.execute("SELECT type, stage, ok, error FROM gb_inferences").fetchall() == [
        ("remember", "extract", False, "LLM call of stage extract failed: timed out, no time left to retry")
    ]
    assert nothing_stored(db)
    assert fake_openai.requests == []


def test_query_with_embeddings_that_never_answer_is_a_502_before_the_lambda_ends(
    api, db, models, five_second_lambda
):
    _, fake_openai = models
    remember(api, "Alice works at Acme.")
    fake_openai.inject(Fault.never_answer(), times=3)

    started = time.monotonic()
    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?", "session_id": "q"})
    elapsed = time.monotonic() - started

    assert reply.status == 502
    assert reply.json == {"error": "embeddings call failed: timed out, no time left to retry"}
    assert elapsed < REMAINING_MS / 1000 - 1.5
    assert db.execute("SELECT type, stage, ok FROM gb_inferences WHERE session_id = 'q'").fetchall() == [
        ("query", "embed", False)
    ]
