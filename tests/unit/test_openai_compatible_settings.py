"""GB_LLM_PROVIDER=openai and the configurable price table, as read from the environment."""

import pytest

from gligabao import bootstrap
from gligabao.ai.openai_llm import OpenAICompatibleLLM
from gligabao.ai.prices import LongContext, Price, cost_usd
from gligabao.errors import NotConfigured
from gligabao.settings import InvalidConfiguration, Settings

LOCAL = {
    "GB_LLM_PROVIDER": "OpenAI",
    "OPENAI_API_KEY": "ollama",
    "OPENAI_BASE_URL": "http://localhost:11434/v1",
}


def test_the_openai_provider_builds_a_chat_completions_llm_of_the_named_model():
    settings = Settings.from_env({**LOCAL, "GB_LLM_MODEL": "llama3.1:8b", "GB_LLM_STRUCTURED_OUTPUT": "Off"})

    llm = bootstrap.Bundle(settings).llm

    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.default_model, llm.structured_output) == ("llama3.1:8b", "off")
    assert "ollama" not in repr(llm)


def test_the_openai_provider_needs_its_model_named():
    with pytest.raises(NotConfigured, match="GB_LLM_MODEL must name the model with GB_LLM_PROVIDER=openai"):
        _ = bootstrap.Bundle(Settings.from_env(LOCAL)).llm


def test_the_openai_provider_needs_the_openai_key_for_the_llm():
    env = {"GB_LLM_PROVIDER": "openai", "GB_LLM_MODEL": "llama3.1:8b"}

    with pytest.raises(NotConfigured, match=r"^LLM not configured: OPENAI_API_KEY is not set$"):
        _ = bootstrap.Bundle(Settings.from_env(env)).llm


def test_model_prices_are_json_of_input_and_output_usd_per_million_tokens():
    settings = Settings.from_env(
        {"GB_MODEL_PRICES": '{"llama3.1:8b": [0, 0], "gpt-4o-mini": {"input": 0.15, "output": 0.6}}'}
    )

    assert bootstrap.model_prices(settings) == {"llama3.1:8b": Price(0, 0), "gpt-4o-mini": Price(0.15, 0.6)}


def test_a_configured_price_may_name_the_cache_and_a_long_context_as_the_gligabao_server_does():
    settings = Settings.from_env(
        {
            "GB_MODEL_PRICES": '{"claude-haiku-5-5": {"input": 0.2, "output": 1, "cache_write": 0.25,'
            ' "cache_read": 0.02, "long_threshold": 200000, "long_input": 0.4, "long_output": 2}}'
        }
    )

    assert bootstrap.model_prices(settings) == {
        "claude-haiku-5-5": Price(0.2, 1.0, 0.25, 0.02, LongContext(200_000, 0.4, 2.0))
    }


@pytest.mark.parametrize(
    "value",
    [
        "not json",
        '{"m": [1]}',
        '{"m": [-1, 2]}',
        '{"m": "cheap"}',
        "[1, 2]",
        '{"m": {"input": 1}}',
        '{"m": {"input": 1, "output": 2, "cache_read": -1}}',
        '{"m": {"input": 1, "output": 2, "long_threshold": 1000}}',
        '{"m": {"input": 1, "output": 2, "long_threshold": 0, "long_input": 2, "long_output": 4}}',
        '{"m": {"input": 1, "output": 2, "cache": 1}}',
    ],
)
def test_a_price_table_the_service_cannot_read_names_its_variable(value):
    with pytest.raises(InvalidConfiguration, match=r"^configuration invalid: GB_MODEL_PRICES: "):
        Settings.from_env({"GB_MODEL_PRICES": value})


def test_a_configured_price_comes_before_the_package_s_and_an_unknown_model_costs_null():
    configured = {"claude-haiku-4-5": Price(2.0, 10.0), "llama3.1:8b": Price(0.1, 0.2)}

    assert cost_usd("claude-haiku-4-5-20251001", 1_000_000, 0, configured) == pytest.approx(2.0)
    assert cost_usd("llama3.1:8b", 1_000_000, 1_000_000, configured) == pytest.approx(0.3)
    assert cost_usd("claude-haiku-4-5", 1_000_000, 0) == pytest.approx(1.0)
    assert cost_usd("mistral-small", 1_000_000, 1_000_000, configured) is None
