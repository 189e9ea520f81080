"""The per-container model clients, built on first use and kept while the Lambda container lives.

A missing key raises NotConfigured (503) when a client is asked for, not at start.
Base URLs come from ANTHROPIC_BASE_URL and OPENAI_BASE_URL, which the SDKs read themselves.
"""

from __future__ import annotations

import functools

from gligabao.ai.embeddings import Embedder
from gligabao.ai.llm import LLM
from gligabao.config import require_key, settings


@functools.cache
def llm() -> LLM:
    config = settings()
    if config.llm_provider == "bedrock":
        return LLM(provider="bedrock", default_model=config.llm_model)
    return LLM(api_key=require_key("ANTHROPIC_API_KEY"), default_model=config.llm_model)


@functools.cache
def embedder() -> Embedder:
    config = settings()
    return Embedder(
        api_key=require_key("OPENAI_API_KEY"),
        model=config.embedding_model,
        dimensions=config.embedding_dimensions,
    )


def reset() -> None:
    """Forget the clients, after the configuration changed (tests)."""
    llm.cache_clear()
    embedder.cache_clear()


def preload_on_snapshot() -> None:
    """Under SnapStart, import the provider SDKs before the snapshot is taken.

    A restored container then starts with them loaded, for free. Without SnapStart (locally,
    in tests, on plain Lambda) nothing happens: the SDKs stay imported on the first model call,
    so a cold start does not pay for them.
    """
    try:
        from snapshot_restore_py import register_before_snapshot  # only in the Lambda runtime
    except ImportError:
        return
    register_before_snapshot(import_provider_sdks)


def import_provider_sdks() -> None:
    import anthropic  # noqa: F401
    import openai  # noqa: F401
