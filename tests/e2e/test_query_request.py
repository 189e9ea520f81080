"""POST /v1/gb/query over HTTP: the request fields and the errors of seeds/query.md."""

from __future__ import annotations

import re

import psycopg
import pytest
from conftest import reconfigure
from fakes.anthropic_server import Reply, prompt_text
from query_helpers import alice_works_at_acme, ask, reply_citing


@pytest.fixture
def providers(fake_anthropic, fake_openai):
    fake_anthropic.responder = lambda body: reply_citing(entities=[1, 2], edges=[1])
    return fake_anthropic, fake_openai


def inferences(db) -> list[tuple]:
    return db.execute("SELECT type, stage, model, reasoning, ok FROM gb_inferences ORDER BY id").fetchall()


# --- query, user_id, dataset, session_id --------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", None, 42])
def test_query_must_be_a_non_empty_string(api, db, providers, query):
    alice_works_at_acme(db)

    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": query})

    assert reply.status == 400
    assert "query" in reply.json["error"]


def test_query_is_required(api, db, providers):
    reply = api.post("/v1/gb/query", {"user_id": "u1"})

    assert (reply.status, reply.json) == (400, {"error": "query is required"})


def test_user_id_is_required(api, db, providers):
    reply = api.post("/v1/gb/query", {"query": "Where does Alice work?"})

    assert (reply.status, reply.json) == (400, {"error": "user_id is required"})


def test_invalid_json_body_is_400(api, db, providers):
    reply = api.post("/v1/gb/query", raw=b'{"user_id": "u1", "query": ')

    assert (reply.status, reply.json) == (400, {"error": "invalid JSON body"})


def test_dataset_defaults_to_main_and_only_that_users_dataset_is_used(api, db, providers):
    alice_works_at_acme(db, "u1", "main")

    assert ask(api).status == 200
    assert ask(api, dataset="main").status == 200
    reply = ask(api, dataset="work")
    assert (reply.status, reply.json) == (404, {"error": "dataset 'work' not found"})
    other = api.post("/v1/gb/query", {"user_id": "u2", "query": "Where does Alice work?"})
    assert other.status == 404


def test_dataset_name_must_be_valid(api, db, providers):
    reply = ask(api, dataset="no spaces")

    assert reply.status == 400
    assert "dataset" in reply.json["error"]


def test_session_id_is_echoed_and_omitted_when_the_request_has_none(api, db, providers):
    alice_works_at_acme(db)

    with_session = ask(api, session_id="chat-42")
    without = ask(api)

    assert with_session.json["session_id"] == "chat-42"
    assert list(with_session.json) == ["session_id", "answer", "evidence"]
    assert "session_id" not in without.json


@pytest.mark.parametrize("session_id", ["x" * 129, "chat\n42", "tab\there"])
def test_session_id_longer_than_128_bytes_or_with_control_characters_is_400(api, db, providers, session_id):
    alice_works_at_acme(db)

    reply = ask(api, session_id=session_id)

    assert reply.status == 400
    assert "session_id" in reply.json["error"]


def test_session_id_does_not_change_retrieval_or_the_answer(api, db, providers):
    alice_works_at_acme(db)
    fake_anthropic, _ = providers

    first = ask(api, session_id="a").json
    second = ask(api, session_id="b").json

    assert first["evidence"] == second["evidence"]
    first_prompt, second_prompt = (prompt_text(body) for body in fake_anthropic.messages)
    assert re.sub("<current_time>.*", "", first_prompt) == re.sub("<current_time>.*", "", second_prompt)


def test_body_over_64_kib_is_413(api, db, providers):
    reply = ask(api, "x" * (64 * 1024 + 1))

    assert reply.status == 413


# --- reasoning and models -----------------------------------------------------------------------


def test_reasoning_as_a_string_is_the_level_of_the_query_stage(api, db, providers):
    alice_works_at_acme(db)
    reconfigure(max_reasoning="low")
    fake_anthropic, _ = providers

    assert ask(api, reasoning="LOW").status == 200

    assert fake_anthropic.messages[-1]["thinking"]["type"] == "enabled"
    assert ("query", "query", "low") in [(t, s, r) for t, s, _, r, _ in inferences(db)]


def test_reasoning_per_stage_and_a_stage_left_out_runs_with_none(api, db, providers):
    alice_works_at_acme(db)
    reconfigure(max_reasoning="high")
    fake_anthropic, _ = providers

    assert ask(api, reasoning={"detect_geo": "high"}).status == 200

    assert fake_anthropic.messages[-1]["thinking"] == {"type": "disabled"}
    assert [r for _, s, _, r, _ in inferences(db) if s == "query"] == ["none"]


@pytest.mark.parametrize(
    "reasoning, said",
    [
        ("extreme", "unknown level"),
        ({"query": "max"}, "unknown level"),
        ({"answer": "low"}, "unknown stage"),
        ({"extract": "low"}, "stage of remember"),
        (3, "reasoning"),
        (["low"], "reasoning"),
    ],
)
def test_reasoning_with_an_unknown_level_stage_or_shape_is_400(api, db, providers, reasoning, said):
    alice_works_at_acme(db)

    reply = ask(api, reasoning=reasoning)

    assert reply.status == 400
    assert said in reply.json["error"]


def test_models_picks_the_model_of_the_query_stage(api, db, providers):
    alice_works_at_acme(db)
    reconfigure(allowed_models="claude-haiku-5-5,claude-sonnet-4-6")
    fake_anthropic, _ = providers

    assert ask(api, models={"query": "claude-sonnet-4-6"}).status == 200

    assert fake_anthropic.messages[-1]["model"] == "claude-sonnet-4-6"
    assert ("query", "claude-sonnet-4-6") in [(s, m) for _, s, m, _, _ in inferences(db)]


@pytest.mark.parametrize(
    "models, said",
    [
        ({"query": "bad model name!"}, "invalid model name"),
        ({"query": 7}, "invalid model name"),
        ({"resolve": "claude-sonnet-4-6"}, "stage of remember"),
        ({"judge": "claude-sonnet-4-6"}, "unknown stage"),
        ("claude-sonnet-4-6", "models"),
    ],
)
def test_models_with_another_stage_or_a_malformed_name_is_400(api, db, providers, models, said):
    alice_works_at_acme(db)

    reply = ask(api, models=models)

    assert reply.status == 400
    assert said in reply.json["error"]


# --- geo (off on this server) --------------------------------------------------------------------


@pytest.mark.parametrize("fields", [{"geo_nearby": True}, {"geo_radius_km": 10}])
def test_geo_nearby_and_geo_radius_km_are_400_while_geo_is_not_enabled(api, db, providers, fields):
    alice_works_at_acme(db)

    reply = ask(api, **fields)

    assert reply.status == 400
    assert "geo is not enabled" in reply.json["error"]


@pytest.mark.parametrize(
    "fields",
    [
        {"geo_radius_km": 0},
        {"geo_radius_km": -5},
        {"geo_radius_km": 20015.5},
        {"geo_radius_km": "far"},
        {"geo_nearby": False, "geo_radius_km": 10},
        {"geo_nearby": "yes"},
    ],
)
def test_geo_fields_out_of_their_rules_are_400(api, db, providers, fields):
    reply = ask(api, **fields)

    assert reply.status == 400
    assert "geo" in reply.json["error"]


def test_geo_nearby_false_is_accepted(api, db, providers):
    alice_works_at_acme(db)

    assert ask(api, geo_nearby=False).status == 200


# --- 502 and 503 ----------------------------------------------------------------------------------


def test_missing_anthropic_key_is_503(api, db, fake_openai):
    alice_works_at_acme(db)

    reply = ask(api)

    assert (reply.status, reply.json) == (503, {"error": "LLM not configured: ANTHROPIC_API_KEY is not set"})


def test_missing_openai_key_is_503(api, db, fake_anthropic):
    alice_works_at_acme(db)

    reply = ask(api)

    assert reply.status == 503
    assert "OPENAI_API_KEY" in reply.json["error"]


def test_a_failed_llm_call_is_502_and_recorded(api, db, providers):
    alice_works_at_acme(db)
    fake_anthropic, _ = providers
    fake_anthropic.queue(Reply.error(500), times=3)

    reply = ask(api)

    assert reply.status == 502
    assert [(s, ok) for _, s, _, _, ok in inferences(db)] == [("embed", True), ("query", False)]


@pytest.mark.parametrize(
    "answer",
    [
        "I think Alice works at Acme.",  # no JSON
        {"answer": ""},  # empty
        {"answer": "   ", "entities": [1]},  # empty
        {"entities": [1]},  # no answer
        Reply(text='{"answer": "Alice works', stop_reason="max_tokens"),  # truncated
    ],
    ids=["prose", "empty", "blank", "no-answer", "truncated"],
)
def test_an_llm_reply_that_cannot_be_parsed_is_empty_or_truncated_is_502(api, db, providers, answer):
    alice_works_at_acme(db)
    fake_anthropic, _ = providers
    fake_anthropic.queue(answer)

    reply = ask(api)

    assert reply.status == 502
    assert "stage query" in reply.json["error"]


def test_a_question_that_cannot_be_embedded_is_502_and_no_llm_is_called(api, db, providers):
    alice_works_at_acme(db)
    fake_anthropic, fake_openai = providers
    fake_openai.fail(500, times=3)

    reply = ask(api)

    assert reply.status == 502
    assert "embeddings" in reply.json["error"]
    assert fake_anthropic.messages == []
    assert [(s, ok) for _, s, _, _, ok in inferences(db)] == [("embed", False)]


def test_a_vector_store_that_cannot_be_searched_is_502(api, db, providers, monkeypatch):
    from gligabao.db import graph_reads

    alice_works_at_acme(db)

    def failing(*args, **kwargs):
        raise psycopg.errors.DataException("different vector dimensions 1536 and 3")

    monkeypatch.setattr(graph_reads, "send_context_rows", failing)

    reply = ask(api)

    assert reply.status == 502
    assert "vector store could not be searched" in reply.json["error"]


def test_a_dataset_deleted_since_a_query_found_it_is_404_and_looked_up_again(api, db, providers):
    alice_works_at_acme(db)
    assert ask(api).status == 200  # the container now knows the dataset: no lookup before the embedding

    assert api.delete("/v1/gb/datasets/main?user_id=u1").status == 204
    gone, again = ask(api), ask(api)

    assert (gone.status, gone.json) == (404, {"error": "dataset 'main' not found"})
    assert again.status == 404
    assert len(providers[1].embedding_requests) == 2  # the first query's and the one that found it gone
