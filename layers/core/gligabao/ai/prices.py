"""What a model call costs: USD per million tokens, per model.

Thinking tokens are billed as output tokens (the providers count them in the
output). Cache reads and writes are priced as plain input here: a small
overestimate of reads and underestimate of writes, which these calls rarely make.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

TOKENS_PER_UNIT = 1_000_000


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float = 0.0


PRICES: dict[str, Price] = {
    # claude-haiku-5-5 has no published price yet: assumed equal to claude-haiku-4-5.
    "claude-haiku-5-5": Price(1.00, 5.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
    "claude-sonnet-4-5": Price(3.00, 15.00),
    "claude-sonnet-4-6": Price(3.00, 15.00),
    "claude-opus-4-5": Price(5.00, 25.00),
    "text-embedding-3-small": Price(0.02),
    "text-embedding-3-large": Price(0.13),
    "text-embedding-ada-002": Price(0.10),
}

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
    """The configured price of the model (GB_MODEL_PRICES: its exact name, else its base name),
    else the package's; None when neither knows it."""
    for name in (model, model.strip().lower(), base_model(model)):
        if configured and name in configured:
            return configured[name]
    return PRICES.get(base_model(model))


def cost_usd(
    model: str,
    input_tokens: int | None,
    output_tokens: int | None,
    configured: Mapping[str, Price] | None = None,
) -> float | None:
    """The cost of one call; None for a model no table knows (never a guess)."""
    price = price_of(model, configured)
    if price is None:
        return None
    cost = (input_tokens or 0) * price.input_per_mtok + (output_tokens or 0) * price.output_per_mtok
    return round(cost / TOKENS_PER_UNIT, 8)  # the precision of gb_inferences.cost_usd
