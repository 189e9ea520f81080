"""Embeddings without a provider (SPEC sections 5 and 8): how texts are split into requests, and
a missing key."""

import pytest

from gligabao import bootstrap
from gligabao.ai.embeddings import MAX_TOKENS_PER_REQUEST, request_batches
from gligabao.errors import NotConfigured


def test_requests_are_split_past_the_token_limit_estimated_at_three_characters_a_token():
    a_third = "x" * (MAX_TOKENS_PER_REQUEST)  # estimated at 100,000 tokens
    assert [len(batch) for batch in request_batches([a_third] * 4)] == [3, 1]
    assert [len(batch) for batch in request_batches([a_third + "x"] * 3)] == [2, 1]


def test_batches_keep_the_texts_in_order():
    texts = [f"t{i}" for i in range(5000)]
    batches = request_batches(texts)
    assert [len(batch) for batch in batches] == [2048, 2048, 904]
    assert [text for batch in batches for text in batch] == texts


def test_a_missing_key_is_not_configured():
    with pytest.raises(NotConfigured) as raised:
        _ = bootstrap.bundle().embedder
    assert raised.value.status == 503
    assert raised.value.message == "embeddings not configured: OPENAI_API_KEY is not set"
