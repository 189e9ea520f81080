"""What `gligabao serve` runs on (local/offline_choice.py): offline where no provider is named and
no key is set, never over a key or a named provider; and the line that says so."""

from __future__ import annotations

from pydantic import SecretStr

from gligabao import bootstrap
from gligabao.bootstrap import Bundle
from gligabao.local.offline_choice import offline_where_keyless, providers_line
from gligabao.settings import Settings


def chosen(**settings) -> tuple[str, str]:
    served = offline_where_keyless(Bundle(Settings(**settings)))
    return served.settings.llm_provider, served.settings.embedding_provider


def test_with_no_key_both_are_offline_and_the_served_bundle_is_installed():
    assert chosen() == ("offline", "offline")
    assert bootstrap.bundle().settings.llm_provider == "offline"
    assert type(bootstrap.bundle().llm).__name__ == "OfflineLLM"


def test_a_key_that_is_set_is_always_used():
    assert chosen(anthropic_api_key=SecretStr("sk-ant-x")) == ("anthropic", "offline")
    assert chosen(openai_api_key=SecretStr("sk-x")) == ("offline", "openai")
    both = {"anthropic_api_key": SecretStr("sk-ant-x"), "openai_api_key": SecretStr("sk-x")}
    deps = Bundle(Settings(**both))
    assert offline_where_keyless(deps) is deps


def test_a_named_provider_is_never_replaced():
    assert chosen(llm_provider="bedrock") == ("bedrock", "offline")
    assert chosen(llm_provider="anthropic", embedding_provider="openai") == ("anthropic", "openai")


def test_the_start_line_says_what_runs_and_what_offline_is_for():
    assert providers_line(Settings(llm_provider="offline", embedding_provider="offline")) == (
        "providers: LLM offline (rule-based: no ANTHROPIC_API_KEY), embeddings offline (hashed words: "
        "no OPENAI_API_KEY); offline providers are for trying the API: set the keys for real extraction "
        "(docs/providers.md)"
    )
    assert (
        providers_line(Settings())
        == "providers: LLM anthropic claude-haiku-5-5, embeddings openai text-embedding-3-small"
    )


def test_on_lambda_a_missing_key_stays_a_503():
    import pytest

    from gligabao.errors import NotConfigured

    with pytest.raises(NotConfigured):
        _ = Bundle(Settings()).llm
    with pytest.raises(NotConfigured):
        _ = Bundle(Settings()).embedder
