"""What a model call costs: USD per million tokens, per model: the gligabao server's table and rules.

The table and rules are those of the server this project ports (gligabao-server 0.108.1: its
built-in table, and the costs it records for calls of known usage):

- a model is found by the longest table name its id begins with ("claude-haiku-4-5" prices
  "claude-haiku-4-5-20251001", "claude-sonnet-4" prices "claude-sonnet-4-6");
- input read from the prompt cache and input written to it have prices of their own; a price
  that names none bills them as plain input;
- above a long-context threshold (the call's input tokens, cache reads and writes included, more
  than it) the whole call's input and output are billed at the long-context rates; cache reads and
  writes keep their own prices.

Thinking tokens are billed as output tokens (the providers count them in the output).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

TOKENS_PER_UNIT = 1_000_000


@dataclass(frozen=True)
class LongContext:
    """Rates that replace the plain ones for a call whose input exceeds `threshold` tokens."""

    threshold: int
    input_per_mtok: float
    output_per_mtok: float


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float = 0.0
    cache_write_per_mtok: float | None = None  # None: billed as input
    cache_read_per_mtok: float | None = None  # None: billed as input
    long_context: LongContext | None = None


PRICES: dict[str, Price] = {
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01, LongContext(100_000, 0.50, 2.50)),
    "claude-haiku-4-5": Price(1.00, 5.00, 1.25, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.00, 1.00, 0.08),
    "claude-3-haiku": Price(0.25, 1.25, 0.30, 0.03),
    "claude-sonnet-4-5": Price(3.00, 15.00, 3.75, 0.30),
    "claude-sonnet-4": Price(3.00, 15.00, 3.75, 0.30),
    "claude-3-7-sonnet": Price(3.00, 15.00, 3.75, 0.30),
    "claude-opus-4-5": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-1": Price(15.00, 75.00, 18.75, 1.50),
    "claude-opus-4": Price(15.00, 75.00, 18.75, 1.50),
    # The embedding models' large and ada-002 prices are read from the server's built-in table:
    # it embeds with text-embedding-3-small only, so their costs could not be observed.
    "text-embedding-3-small": Price(0.02),
    "text-embedding-3-large": Price(0.13),
    "text-embedding-ada-002": Price(0.10),
}

# Anthropic's web search tool (web_search_20250305) bills each search the API runs, counted in the
# reply's usage.server_tool_use.web_search_requests, on top of the call's tokens (the results it
# reads are input tokens): $10 per 1,000 searches (Anthropic's pricing page, "Web search tool"),
# whatever the model. The gligabao server bills the same: 0.01 per web_search_requests.
WEB_SEARCH_USD_PER_SEARCH = 0.01

# Bedrock ids wrap the base name: "us.anthropic.claude-haiku-4-5-20251001-v1:0";
# the Anthropic API and Vertex add a snapshot date: "-20251001", "@20251001".
_REGION_PREFIX = re.compile(r"^(?:us|eu|apac|au|jp|global)\.")
_VENDOR_PREFIX = re.compile(r"^anthropic\.")
_VERSION_SUFFIX = re.compile(r"-v\d+(?::\d+)?$")
_DATE_SUFFIX = re.compile(r"[-@]\d{8}$")


def base_model(model: str) -> str:
    """The price-table name of a model id from any of the providers."""
    name = model.strip().lower()
    for pattern in (_REGION_PREFIX, _VENDOR_PREFIX, _VERSION_SUFFIX, _DATE_SUFFIX):
        name = pattern.sub("", name)
    return name


def price_of(model: str, configured: Mapping[str, Price] | None = None) -> Price | None:
    """The price of the model: the longest name of the table that its id (as given, lowercased, or
    as its base name) begins with. GB_MODEL_PRICES's entries replace or add whole entries of the
    package's table; None when neither knows the model."""
    table = {**PRICES, **(configured or {})}
    for name in (model, model.strip().lower(), base_model(model)):
        matches = [known for known in table if name.startswith(known)]
        if matches:
            return table[max(matches, key=len)]
    return None


def cost_usd(
    model: str,
    input_tokens: int | None,
    output_tokens: int | None,
    configured: Mapping[str, Price] | None = None,
    *,
    cache_write_tokens: int | None = None,
    cache_read_tokens: int | None = None,
) -> float | None:
    """The cost of one call; None for a model no table knows (never a guess).

    `input_tokens` is the input neither written to nor read from the prompt cache (Anthropic's
    `input_tokens`); the cache's tokens are counted apart."""
    price = price_of(model, configured)
    if price is None:
        return None
    plain, written, read = input_tokens or 0, cache_write_tokens or 0, cache_read_tokens or 0
    input_rate, output_rate = price.input_per_mtok, price.output_per_mtok
    long = price.long_context
    if long is not None and plain + written + read > long.threshold:
        input_rate, output_rate = long.input_per_mtok, long.output_per_mtok
    cost = (
        plain * input_rate
        + (output_tokens or 0) * output_rate
        + written * _or(price.cache_write_per_mtok, price.input_per_mtok)
        + read * _or(price.cache_read_per_mtok, price.input_per_mtok)
    )
    return round(cost / TOKENS_PER_UNIT, 8)  # the precision of gb_inferences.cost_usd


def _or(rate: float | None, default: float) -> float:
    return default if rate is None else rate


def web_search_cost_usd(searches: int | None) -> float:
    """What the web searches of one call cost, beside its tokens."""
    return round((searches or 0) * WEB_SEARCH_USD_PER_SEARCH, 8)
