"""Configuration from the environment; provider keys from Secrets Manager on Lambda.

Everything is read once per container and cached behind one function each, as
Lambda wants. Tests call `reset_caches()` after changing the environment.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass

from gligabao.errors import NotConfigured

PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
SECRETS_CACHE_SECONDS = 300


@dataclass(frozen=True)
class Settings:
    database_url: str | None
    llm_provider: str
    llm_model: str
    embedding_model: str
    embedding_dimensions: int
    geo: bool
    geo_resolver: str
    geo_radius_km: float
    secrets_arn: str | None
    data_dir: str


@functools.cache
def settings() -> Settings:
    env = os.environ
    return Settings(
        database_url=env.get("DATABASE_URL") or None,
        llm_provider=env.get("GB_LLM_PROVIDER", "anthropic").lower(),
        llm_model=env.get("GB_LLM_MODEL", "claude-haiku-5-5"),
        embedding_model=env.get("GB_EMBEDDING_MODEL", "text-embedding-3-small"),
        embedding_dimensions=int(env.get("GB_EMBEDDING_DIMENSIONS", "1536")),
        geo=env.get("GB_GEO", "off").lower() == "on",
        geo_resolver=env.get("GB_GEO_RESOLVER", "local"),
        geo_radius_km=float(env.get("GB_GEO_RADIUS_KM", "50")),
        secrets_arn=env.get("GB_SECRETS_ARN") or None,
        data_dir=env.get("GB_DATA_DIR", os.path.join(os.getcwd(), "var")),
    )


def provider_keys() -> dict[str, str]:
    """The provider keys that are set: from the secret on Lambda, else from the environment."""
    keys = {name: os.environ[name] for name in PROVIDER_KEYS if os.environ.get(name)}
    arn = settings().secrets_arn
    if arn:
        keys.update({k: v for k, v in _secret_keys(arn).items() if k in PROVIDER_KEYS and v})
    return keys


def _secret_keys(arn: str) -> dict[str, str]:
    # Imported here: Powertools parameters pulls in boto3, which cold start does not need.
    from aws_lambda_powertools.utilities import parameters

    try:
        value = parameters.get_secret(arn, max_age=SECRETS_CACHE_SECONDS)
    except Exception:  # an unreachable or missing secret is "not configured", not a crash
        return {}
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        return {}
    return {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}


def require_key(name: str) -> str:
    key = provider_keys().get(name)
    if key:
        return key
    what = "LLM" if name == "ANTHROPIC_API_KEY" else "embeddings"
    raise NotConfigured(f"{what} not configured: {name} is not set")


def llm_configured() -> bool:
    return settings().llm_provider == "bedrock" or "ANTHROPIC_API_KEY" in provider_keys()


def reset_caches() -> None:
    settings.cache_clear()
    from gligabao.ai import clients

    clients.reset()
    try:
        from aws_lambda_powertools.utilities.parameters.base import clear_caches

        clear_caches()
    except ImportError:
        pass
