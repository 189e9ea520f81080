"""GB_LLM_PROVIDER=openai over HTTP: every LLM stage of remember and query (extract, resolve, image,
query) goes to an OpenAI-compatible Chat Completions server at OPENAI_BASE_URL, the embeddings to the
same server: a fully self-hosted setup (Ollama, vLLM), with no call to Anthropic."""

from __future__ import annotations

import pytest
from conftest import reconfigure
from image_files import image_body, image_file
from remember_helpers import remember, rule_based_model, stage_of

MODEL = "llama3.1:8b"


@pytest.fixture
def local_models(fake_anthropic, fake_openai):
    """One OpenAI-compatible server for the LLM and the embeddings, answering as the rule-based
    model; the Anthropic fake is there only to show it is never called."""
    reconfigure(llm_provider="openai", llm_model=MODEL, model_prices={"text-embedding-3-small": (0.0, 0.0)})
    fake_openai.chat_responder = rule_based_model
    return fake_anthropic, fake_openai


def stages(fake_openai) -> list[str]:
    from fakes.openai_server import as_messages_request

    return [stage_of(as_messages_request(body)) for body in fake_openai.chat_requests]


def test_remember_and_query_run_every_llm_stage_through_chat_completions(api, db, local_models):
    fake_anthropic, fake_openai = local_models

    remember(api, "Alice lives in Paris.", reference_time="2024-01-01T00:00:00Z")
    second = remember(api, "Alice lives in Rome.", reference_time="2025-01-01T00:00:00Z")
    fake_openai.chat_responder = lambda body: {"answer": "Alice lives in Rome.", "edges": [2], "entities": []}
    answer = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice live?"})

    assert [e["relation"] for e in second["superseded"] and second["edges"]] == ["lives_in"]
    assert len(second["superseded"]) == 1  # the resolve stage, through Chat Completions
    assert answer.status == 200, answer.json
    assert answer.json["answer"] == "Alice lives in Rome."
    assert [e["id"] for e in answer.json["evidence"]["edges"]] == [2]
    assert stages(fake_openai)[:3] == ["extract", "extract", "resolve"]
    assert len(fake_openai.chat_requests) == 4 and fake_anthropic.messages == []
    assert {body["model"] for body in fake_openai.chat_requests} == {MODEL}
    rows = db.execute(
        "SELECT stage, model, input_tokens > 0, cost_usd FROM gb_inferences ORDER BY id"
    ).fetchall()
    llm_rows = [row for row in rows if row[0] != "embed"]
    assert [row[0] for row in llm_rows] == ["extract", "extract", "resolve", "query"]
    assert all(row[1] == MODEL and row[2] and row[3] is None for row in llm_rows)  # no price: null
    assert all(row[3] == 0 for row in rows if row[0] == "embed")  # the configured price


def test_a_stage_s_model_is_chosen_per_request_as_with_anthropic(api, db, local_models):
    _, fake_openai = local_models
    reconfigure(allowed_models=f"{MODEL},qwen2.5:14b")

    remember(api, "Alice works at Acme.", models={"extract": "qwen2.5:14b"})

    assert fake_openai.chat_requests[0]["model"] == "qwen2.5:14b"


def test_an_image_is_described_through_chat_completions(api, db, local_models):
    fake_anthropic, fake_openai = local_models

    reply = api.post("/v1/gb/remember", image_body(image_file(), caption="Alice works at Acme."))

    assert reply.status == 200, reply.json
    assert reply.json["description"]
    [request] = fake_openai.chat_requests
    image_part = request["messages"][1]["content"][0]
    assert image_part["type"] == "image_url" and image_part["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    assert fake_anthropic.messages == []


def test_a_broken_reply_of_the_local_model_is_a_502_that_stores_nothing(api, db, local_models):
    from fakes.openai_server import Chat

    _, fake_openai = local_models
    fake_openai.queue_chat(Chat(text='{"entities": [', finish_reason="length"))

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."})

    assert reply.status == 502
    assert reply.json == {"error": "LLM reply of stage extract was truncated (length)"}
    assert db.execute("SELECT count(*) FROM gb_artifacts").fetchone()[0] == 0


def test_health_names_one_provider_and_its_key_when_the_llm_is_openai_compatible(api, db, fake_openai):
    reconfigure(llm_provider="openai", llm_model=MODEL)

    health = api.get("/v1/gb/health").json

    assert health["providers"] == {"openai": {"configured": True}}
    assert health["missing"] == []
