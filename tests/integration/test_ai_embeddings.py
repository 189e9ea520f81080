"""Embeddings through the real `openai` SDK against a local fake Embeddings API (SPEC sections 5, 8, 12)."""

import pytest
from conftest import reconfigure
from fakes.fixtures import OPENAI_TEST_KEY
from fakes.openai_server import cosine

from gligabao import bootstrap
from gligabao.ai.embeddings import MAX_INPUTS_PER_REQUEST
from gligabao.errors import ProviderError
from gligabao.observability.inferences import CallContext

TEXTS = ["Alice", "Acme", "Alice works at Acme.", "Alice lives in Paris.", "Paris"]


@pytest.fixture
def call() -> CallContext:
    return CallContext(user_id="u1", type="remember", session_id="a")


@pytest.fixture
def small_vectors(monkeypatch):
    """Short vectors keep the tests that send thousands of texts fast."""
    reconfigure(embedding_dimensions="8")


def embed(call, texts, **options):
    return bootstrap.bundle().embedder.embed(call, texts, **options)


def test_one_request_embeds_all_the_texts_of_a_call(fake_openai, call):
    vectors = embed(call, TEXTS)
    assert len(fake_openai.embedding_requests) == 1
    assert fake_openai.embedding_requests[0]["input"] == TEXTS
    assert len(vectors) == len(TEXTS)


def test_vectors_come_back_in_the_order_of_the_texts(fake_openai, call):
    fake_openai.mangle(lambda reply: {**reply, "data": list(reversed(reply["data"]))})
    vectors = embed(call, TEXTS)
    for text, vector in zip(TEXTS, vectors, strict=True):
        assert vector == pytest.approx(fake_openai.vector(text), abs=1e-6)


def test_the_request_uses_the_configured_model_and_dimensions(fake_openai, call, monkeypatch):
    reconfigure(embedding_model="text-embedding-3-large", embedding_dimensions="256")
    [vector] = embed(call, ["Alice"])
    body = fake_openai.embedding_requests[-1]
    assert (body["model"], body["dimensions"]) == ("text-embedding-3-large", 256)
    assert len(vector) == 256


def test_the_default_is_text_embedding_3_small_at_1536_dimensions(fake_openai, call):
    [vector] = embed(call, ["Alice"])
    body = fake_openai.embedding_requests[-1]
    assert (body["model"], body["dimensions"]) == ("text-embedding-3-small", 1536)
    assert len(vector) == 1536


def test_dimensions_are_sent_only_to_text_embedding_3_models(fake_openai, call, monkeypatch):
    reconfigure(embedding_model="text-embedding-ada-002")
    embed(call, ["Alice"])
    assert "dimensions" not in fake_openai.embedding_requests[-1]


@pytest.mark.parametrize("stage", ["embed", "query"])
def test_every_request_carries_the_stage_header(fake_openai, call, stage):
    embed(call, ["Alice"], stage=stage)
    assert fake_openai.requests[-1].headers["x-gligabao-stage"] == stage
    assert call.inferences[-1].stage == stage


def test_the_key_reaches_the_provider_as_a_bearer_token(fake_openai, call):
    embed(call, ["Alice"])
    assert fake_openai.requests[-1].headers["authorization"] == f"Bearer {OPENAI_TEST_KEY}"


def test_no_texts_make_no_request(fake_openai, call):
    assert embed(call, []) == []
    assert fake_openai.requests == []
    assert call.inferences == []


def test_requests_are_split_only_past_2048_inputs(fake_openai, call, small_vectors):
    texts = [f"fact number {i}" for i in range(MAX_INPUTS_PER_REQUEST + 1)]
    vectors = embed(call, texts)
    assert [len(body["input"]) for body in fake_openai.embedding_requests] == [2048, 1]
    assert vectors[2048] == pytest.approx(fake_openai.vector(texts[2048], 8), abs=1e-6)
    assert vectors[0] == pytest.approx(fake_openai.vector(texts[0], 8), abs=1e-6)
    assert len(call.inferences) == 2


def test_exactly_2048_inputs_are_one_request(fake_openai, call, small_vectors):
    embed(call, [f"fact {i}" for i in range(MAX_INPUTS_PER_REQUEST)])
    assert len(fake_openai.embedding_requests) == 1


def test_one_inference_per_request_with_the_prompt_tokens(fake_openai, call):
    embed(call, ["Alice works at Acme.", "Paris"])
    [inference] = call.inferences
    assert inference.stage == "embed"
    assert inference.model == "text-embedding-3-small"
    assert inference.reasoning is None
    assert inference.input_tokens == 5  # the fake counts words
    assert inference.output_tokens == 0
    assert inference.thinking_tokens is None
    assert inference.cost_usd == pytest.approx(5 * 0.02 / 1_000_000)
    assert inference.ok is True


def test_a_reply_with_too_few_vectors_is_a_502(fake_openai, call):
    fake_openai.mangle(lambda reply: {**reply, "data": reply["data"][:-1]})
    with pytest.raises(ProviderError, match="4 vectors for 5 texts") as raised:
        embed(call, TEXTS)
    assert raised.value.status == 502
    assert call.inferences[-1].ok is False


def test_a_vector_of_the_wrong_dimension_is_a_502(fake_openai, call):
    fake_openai.override("Acme", [1.0, 0.0, 0.0])
    with pytest.raises(ProviderError, match="3 dimensions, expected 1536"):
        embed(call, TEXTS)


def test_a_server_error_after_the_retries_is_a_502_and_is_recorded_once(fake_openai, call):
    fake_openai.fail(500, times=3)
    with pytest.raises(ProviderError, match=r"HTTP 500 server_error .* after 3 attempts") as raised:
        embed(call, TEXTS)
    assert raised.value.status == 502
    assert len(fake_openai.requests) == 3  # the first try and two retries
    [inference] = call.inferences
    assert inference.ok is False
    assert "HTTP 500" in inference.error
    assert inference.input_tokens is None and inference.cost_usd is None


def test_a_rate_limit_is_retried(fake_openai, call):
    fake_openai.fail(429)
    assert len(embed(call, TEXTS)) == len(TEXTS)
    assert len(fake_openai.requests) == 2


def test_error_messages_never_hold_the_key_or_the_texts(fake_openai, call):
    fake_openai.fail(400)
    with pytest.raises(ProviderError) as raised:
        embed(call, TEXTS)
    assert OPENAI_TEST_KEY not in raised.value.message
    assert not any(text in raised.value.message for text in TEXTS)


def test_the_fake_gives_identical_texts_cosine_one_and_similar_texts_a_high_cosine(fake_openai, call):
    alice, alice_again, alice_moved, unrelated = embed(
        call,
        [
            "Alice works at Acme in Paris",
            "alice works at ACME in paris",
            "Alice works at Acme in Berlin",
            "The weather was cold yesterday",
        ],
    )
    assert cosine(alice, alice_again) == pytest.approx(1.0)
    assert cosine(alice, alice_moved) > 0.75
    assert abs(cosine(alice, unrelated)) < 0.3
