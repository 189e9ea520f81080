"""The price table: USD per million tokens, thinking billed as output (SPEC section 8)."""

import pytest

from gligabao.ai.prices import base_model, cost_usd


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-haiku-4-5", 1.00 + 5.00),
        ("claude-haiku-5-5", 1.00 + 5.00),
        ("claude-sonnet-4-5", 3.00 + 15.00),
        ("claude-sonnet-4-6", 3.00 + 15.00),
        ("claude-opus-4-5", 5.00 + 25.00),
    ],
)
def test_a_million_input_and_a_million_output_tokens_cost_the_table_prices(model, expected):
    assert cost_usd(model, 1_000_000, 1_000_000) == pytest.approx(expected)


def test_output_tokens_cost_more_than_input_tokens():
    assert cost_usd("claude-sonnet-4-5", 0, 1000) == pytest.approx(0.015)
    assert cost_usd("claude-sonnet-4-5", 1000, 0) == pytest.approx(0.003)


@pytest.mark.parametrize(
    ("model", "per_million"),
    [("text-embedding-3-small", 0.02), ("text-embedding-3-large", 0.13), ("text-embedding-ada-002", 0.10)],
)
def test_embedding_models_cost_input_tokens_only(model, per_million):
    assert cost_usd(model, 1_000_000, 0) == pytest.approx(per_million)


def test_an_unknown_model_has_no_cost():
    assert cost_usd("gpt-unknown-9", 1000, 1000) is None


def test_missing_token_counts_count_as_zero():
    assert cost_usd("claude-haiku-4-5", None, None) == 0.0


def test_cost_keeps_the_database_precision_of_eight_decimals():
    assert cost_usd("text-embedding-3-small", 7, 0) == 0.00000014


@pytest.mark.parametrize(
    "model_id",
    [
        "anthropic.claude-haiku-4-5-20251001-v1:0",
        "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
        "global.anthropic.claude-haiku-4-5-20251001-v1:0",
        "claude-haiku-4-5-20251001",
        "claude-haiku-4-5@20251001",
        "Claude-Haiku-4-5",
    ],
)
def test_bedrock_vertex_and_dated_ids_map_to_the_base_model(model_id):
    assert base_model(model_id) == "claude-haiku-4-5"
    assert cost_usd(model_id, 1_000_000, 0) == pytest.approx(1.00)
