"""The price table: USD per million tokens, the gligabao server's table and rules (issue 39, point 3);
thinking billed as output (SPEC section 8)."""

import pytest

from gligabao.ai.prices import PRICES, LongContext, Price, base_model, cost_usd, price_of

# model: input, output, cache write, cache read (USD per million tokens), as gligabao-server 0.108.1
# has them built in and bills them.
SERVER_TABLE = {
    "claude-haiku-5-5": (0.10, 0.50, 0.125, 0.01),
    "claude-haiku-4-5": (1.00, 5.00, 1.25, 0.10),
    "claude-3-5-haiku": (0.80, 4.00, 1.00, 0.08),
    "claude-3-haiku": (0.25, 1.25, 0.30, 0.03),
    "claude-sonnet-4-5": (3.00, 15.00, 3.75, 0.30),
    "claude-sonnet-4": (3.00, 15.00, 3.75, 0.30),
    "claude-3-7-sonnet": (3.00, 15.00, 3.75, 0.30),
    "claude-opus-4-5": (5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-1": (15.00, 75.00, 18.75, 1.50),
    "claude-opus-4": (15.00, 75.00, 18.75, 1.50),
    "text-embedding-3-small": (0.02, 0.0, 0.02, 0.02),
    "text-embedding-3-large": (0.13, 0.0, 0.13, 0.13),
    "text-embedding-ada-002": (0.10, 0.0, 0.10, 0.10),
}
MILLION = 1_000_000


def test_the_table_knows_the_models_the_server_knows():
    assert set(PRICES) == set(SERVER_TABLE)


@pytest.mark.parametrize(("model", "prices"), SERVER_TABLE.items())
def test_tokens_of_each_kind_cost_the_table_prices(model, prices):
    input_, output, cache_write, cache_read = (price / 1000 for price in prices)  # of 1000 tokens
    assert cost_usd(model, 1000, 0) == pytest.approx(input_)
    assert cost_usd(model, 0, 1000) == pytest.approx(output)
    assert cost_usd(model, 0, 0, cache_write_tokens=1000) == pytest.approx(cache_write)
    assert cost_usd(model, 0, 0, cache_read_tokens=1000) == pytest.approx(cache_read)


def test_only_claude_haiku_5_5_has_a_long_context_rate():
    assert PRICES["claude-haiku-5-5"].long_context == LongContext(100_000, 0.50, 2.50)
    assert [name for name, price in PRICES.items() if price.long_context] == ["claude-haiku-5-5"]


# One call of each kind, on claude-haiku-5-5 unless named: the USD the gligabao server records.


def test_a_plain_call_costs_its_input_and_output():
    assert cost_usd("claude-haiku-5-5", 2000, 500) == 0.00045  # 2000 x 0.10 + 500 x 0.50


def test_input_written_to_the_cache_costs_the_cache_write_price():
    # 1000 x 0.10 + 4000 x 0.125 + 200 x 0.50
    assert cost_usd("claude-haiku-5-5", 1000, 200, cache_write_tokens=4000) == 0.0007


def test_input_read_from_the_cache_costs_the_cache_read_price():
    # 1000 x 0.10 + 30000 x 0.01 + 200 x 0.50
    assert cost_usd("claude-haiku-5-5", 1000, 200, cache_read_tokens=30000) == 0.0005


def test_above_the_long_context_threshold_the_whole_call_costs_the_long_rates():
    assert cost_usd("claude-haiku-5-5", 120_000, 1000) == 0.0625  # 120000 x 0.50 + 1000 x 2.50


def test_a_call_of_exactly_the_threshold_costs_the_plain_rates():
    assert cost_usd("claude-haiku-5-5", 100_000, 1000) == 0.0105  # 100000 x 0.10 + 1000 x 0.50


def test_the_cache_counts_toward_the_threshold_and_keeps_its_own_prices():
    # 10000 + 95000 + 0 > 100000: 10000 x 0.50 + 95000 x 0.01 + 1000 x 2.50
    assert cost_usd("claude-haiku-5-5", 10_000, 1000, cache_read_tokens=95_000) == 0.00845
    # 50000 x 0.50 + 30000 x 0.125 + 20001 x 0.01 + 1000 x 2.50
    assert (
        cost_usd("claude-haiku-5-5", 50_000, 1000, cache_write_tokens=30_000, cache_read_tokens=20_001)
        == 0.03145001
    )


def test_an_embedding_costs_its_input_tokens():
    assert cost_usd("text-embedding-3-small", 5000, 0) == 0.0001  # 5000 x 0.02


def test_an_unknown_model_has_no_cost():
    assert cost_usd("gpt-unknown-9", 1000, 1000) is None


def test_missing_token_counts_count_as_zero():
    assert cost_usd("claude-haiku-4-5", None, None, cache_write_tokens=None, cache_read_tokens=None) == 0.0


def test_cost_keeps_the_database_precision_of_eight_decimals():
    assert cost_usd("text-embedding-3-small", 7, 0) == 0.00000014


@pytest.mark.parametrize(
    ("model", "priced_as"),
    [
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),  # not claude-opus-4: the longest name wins
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-sonnet-4-6", "claude-sonnet-4"),
        ("claude-haiku-5-5-20260101", "claude-haiku-5-5"),
    ],
)
def test_a_model_is_priced_by_the_longest_table_name_it_begins_with(model, priced_as):
    assert price_of(model) == PRICES[priced_as]


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


def test_a_configured_price_replaces_the_whole_entry_and_unpriced_cache_is_input():
    configured = {"claude-haiku-4-5": Price(2.0, 10.0)}

    assert cost_usd("claude-haiku-4-5", 0, 0, configured, cache_read_tokens=MILLION) == pytest.approx(2.0)
    assert cost_usd("claude-haiku-4-5", 0, 0, configured, cache_write_tokens=MILLION) == pytest.approx(2.0)


def test_a_configured_long_context_rate_applies_above_its_threshold():
    configured = {"my-model": Price(1.0, 2.0, 1.5, 0.1, LongContext(1000, 4.0, 8.0))}

    assert cost_usd("my-model", 1000, 1000, configured) == 0.003  # 1000 x 1 + 1000 x 2
    assert cost_usd("my-model", 1001, 1000, configured) == 0.012004  # 1001 x 4 + 1000 x 8
    # 1 x 4 + 1000 x 1.5 + 1000 x 0.1 + 1000 x 8
    assert (
        cost_usd("my-model", 1, 1000, configured, cache_write_tokens=1000, cache_read_tokens=1000) == 0.009604
    )


def test_a_configured_shorter_name_does_not_replace_a_longer_one_of_the_package():
    configured = {"claude-sonnet-4": Price(1.0, 1.0)}

    assert cost_usd("claude-sonnet-4-5", MILLION, 0, configured) == pytest.approx(3.0)
    assert cost_usd("claude-sonnet-4-6", MILLION, 0, configured) == pytest.approx(1.0)
