"""remember's errors (SPEC section 5): 400 for every invalid field before any model call, 413,
502 when a provider fails, 503 when a key is missing; and on any error nothing is stored but
the inference rows of the model calls made."""

from __future__ import annotations

import pytest
from conftest import count_rows, reconfigure
from fakes.anthropic_server import Reply
from graph_rows import graph_counts, nothing_stored
from remember_helpers import use_rule_based_model


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    return fake_anthropic, fake_openai


VALID = {"user_id": "u1", "text": "Alice works at Acme."}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "Alice works at Acme."}, "user_id"),
        ({**VALID, "user_id": "  "}, "user_id"),
        ({**VALID, "user_id": 7}, "user_id"),
        ({**VALID, "text": "   "}, "text"),
        ({**VALID, "text": ""}, "text"),
        ({**VALID, "text": 12}, "text"),
        ({**VALID, "text": "Alice works at Acme.\u0000"}, "text"),
        ({**VALID, "session_id": "s" * 129}, "session_id"),
        ({**VALID, "session_id": "é" * 65}, "session_id"),  # 130 bytes
        ({**VALID, "session_id": "chat\n42"}, "session_id"),
        ({**VALID, "dataset": "my dataset"}, "dataset"),
        ({**VALID, "dataset": "d" * 65}, "dataset"),
        ({**VALID, "dataset": ""}, "dataset"),
        ({**VALID, "reasoning": "extreme"}, "reasoning"),
        ({**VALID, "reasoning": {"query": "low"}}, "reasoning"),
        ({**VALID, "reasoning": {"extract": "low", "detect_geo": "high"}}, "reasoning"),
        ({**VALID, "reasoning": 3}, "reasoning"),
        ({**VALID, "models": {"query": "claude-haiku-4-5"}}, "models"),
        ({**VALID, "models": {"extract": "bad model name!"}}, "models"),
        ({**VALID, "models": "claude-haiku-4-5"}, "models"),
        ({**VALID, "reference_time": "2025-01-31T09:00:00"}, "reference_time"),
        ({**VALID, "reference_time": "2025-01-31"}, "reference_time"),
        ({**VALID, "reference_time": "yesterday"}, "reference_time"),
        ({**VALID, "reference_time": "2025-02-30T09:00:00Z"}, "reference_time"),
        ({**VALID, "sesion_id": "typo"}, "sesion_id"),
        ({"user_id": "u1"}, "text, image and facts"),
        ({**VALID, "image": {"media_type": "image/png", "data": "aGVsbG8="}}, "text, image and facts"),
        ({"user_id": "u1", "image": {"media_type": "image/bmp", "data": "aGVsbG8="}}, "image.media_type"),
        ({"user_id": "u1", "image": {"media_type": "image/png", "data": "not base64!"}}, "image.data"),
        ({**VALID, "caption": "a caption"}, "caption"),
    ],
)
def test_invalid_field_is_400_naming_it_before_any_model_call(api, db, models, body, field):
    fake_anthropic, fake_openai = models

    reply = api.post("/v1/gb/remember", body)

    assert reply.status == 400, reply.json
    assert field in reply.json["error"]
    assert fake_anthropic.requests == [] and fake_openai.requests == []
    assert nothing_stored(db) and count_rows(db, "gb_inferences") == 0


@pytest.mark.parametrize("raw", [b"{not json", b"[]", b'"text"', b""])
def test_a_body_that_is_not_a_json_object_is_400(api, db, models, raw):
    reply = api.post("/v1/gb/remember", raw=raw)

    assert reply.status == 400
    assert set(reply.json) == {"error"}
    assert nothing_stored(db)


def test_a_body_over_1_mib_is_413(api, db, models):
    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": "a" * (1024 * 1024)})

    assert reply.status == 413
    assert models[0].requests == []
    assert nothing_stored(db)


def test_missing_anthropic_key_is_503_without_any_model_call(api, db, models):
    reconfigure(anthropic_api_key=None)

    reply = api.post("/v1/gb/remember", VALID)

    assert reply.status == 503
    assert reply.json == {"error": "LLM not configured: ANTHROPIC_API_KEY is not set"}
    assert models[0].requests == [] and models[1].requests == []
    assert nothing_stored(db)


def test_missing_openai_key_is_503_before_the_llm_is_called(api, db, models):
    reconfigure(openai_api_key=None)

    reply = api.post("/v1/gb/remember", VALID)

    assert reply.status == 503
    assert "OPENAI_API_KEY" in reply.json["error"]
    assert models[0].requests == []
    assert nothing_stored(db) and count_rows(db, "gb_inferences") == 0


@pytest.mark.parametrize(
    "bad_reply",
    [
        Reply.error(500),
        Reply(text='{"entities": [', stop_reason="max_tokens"),
        Reply(text="I cannot find any JSON to give you."),
        Reply(text=""),
        Reply(data={"entities": "Alice"}),
        Reply(stop_reason="refusal", text="no"),
    ],
    ids=["http-500", "truncated", "not-json", "empty", "wrong-schema", "refusal"],
)
def test_failed_extraction_is_502_storing_only_its_inference(api, db, fake_anthropic, fake_openai, bad_reply):
    fake_anthropic.queue(bad_reply, times=3)  # a 500 is tried three times

    reply = api.post("/v1/gb/remember", {**VALID, "session_id": "s1"})

    assert reply.status == 502
    assert "extract" in reply.json["error"]
    assert nothing_stored(db)
    assert db.execute("SELECT stage, ok, dataset_id, session_id FROM gb_inferences").fetchall() == [
        ("extract", False, None, "s1")
    ]
    assert fake_openai.requests == []


def test_failed_embeddings_after_extraction_is_502_and_stores_nothing(api, db, models):
    _, fake_openai = models
    fake_openai.fail(500, times=3)

    reply = api.post("/v1/gb/remember", VALID)

    assert reply.status == 502
    assert "embeddings" in reply.json["error"]
    assert nothing_stored(db)
    assert db.execute("SELECT stage, ok FROM gb_inferences ORDER BY id").fetchall() == [
        ("extract", True),
        ("embed", False),
    ]


def test_embeddings_reply_with_missing_vectors_is_502_and_stores_nothing(api, db, models):
    _, fake_openai = models
    fake_openai.mangle(lambda reply: {**reply, "data": reply["data"][:1]})

    reply = api.post("/v1/gb/remember", VALID)

    assert reply.status == 502
    assert nothing_stored(db)


def test_failed_resolve_call_is_502_and_leaves_the_graph_as_it_was(api, db, models):
    fake_anthropic, _ = models
    assert (
        api.post(
            "/v1/gb/remember", {"user_id": "u1", "text": "Alice lives in Paris.", "session_id": "a"}
        ).status
        == 200
    )
    before = graph_counts(db)
    edges_before = db.execute("SELECT id, invalid_at, expired_at FROM gb_edges").fetchall()
    fake_anthropic.responder = None
    fake_anthropic.queue(
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Lyon", "type": "place"}],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Lyon",
                    "relation": "lives_in",
                    "description": "Alice lives in Lyon.",
                }
            ],
        }
    )
    fake_anthropic.queue(Reply(text="not json at all"))

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice lives in Lyon.", "session_id": "b"})

    assert reply.status == 502
    assert "resolve" in reply.json["error"]
    assert graph_counts(db) == before
    assert db.execute("SELECT id, invalid_at, expired_at FROM gb_edges").fetchall() == edges_before
    assert db.execute(
        "SELECT stage, ok FROM gb_inferences WHERE session_id = 'b' ORDER BY id"
    ).fetchall() == [("extract", True), ("embed", True), ("resolve", False)]
