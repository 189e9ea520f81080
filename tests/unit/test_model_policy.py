"""GB_ALLOWED_MODELS and GB_MAX_REASONING: what a request's `models` and `reasoning` may ask for."""

from __future__ import annotations

import pytest

from gligabao.ai.stages import ModelPolicy
from gligabao.errors import BadRequest
from gligabao.settings import InvalidConfiguration, Settings


def test_by_default_a_request_may_name_only_the_configured_model_and_no_reasoning():
    settings = Settings.from_env({"GB_LLM_MODEL": "claude-sonnet-4-6"})

    assert settings.request_models == ("claude-sonnet-4-6",)
    assert settings.max_reasoning == "none"


def test_allowed_models_are_comma_separated_and_trimmed():
    settings = Settings.from_env({"GB_ALLOWED_MODELS": " claude-haiku-5-5, claude-sonnet-4-6 ,,"})

    assert settings.request_models == ("claude-haiku-5-5", "claude-sonnet-4-6")


def test_max_reasoning_is_a_level_in_any_case_and_anything_else_names_the_variable():
    assert Settings.from_env({"GB_MAX_REASONING": " High "}).max_reasoning == "high"
    with pytest.raises(InvalidConfiguration, match="GB_MAX_REASONING"):
        Settings.from_env({"GB_MAX_REASONING": "extreme"})


def test_a_model_not_allowed_is_refused_by_name():
    policy = ModelPolicy(("claude-haiku-5-5",))

    policy.check_models({"extract": "claude-haiku-5-5"})
    with pytest.raises(
        BadRequest, match=r"model 'claude-opus-4-5' is not allowed here \(allowed: claude-haiku-5-5\)"
    ):
        policy.check_models({"extract": "claude-haiku-5-5", "resolve": "claude-opus-4-5"})


def test_a_level_above_the_maximum_is_refused_by_name():
    policy = ModelPolicy(("claude-haiku-5-5",), max_reasoning="low")

    policy.check_reasoning({"extract": "none", "resolve": "low"})
    with pytest.raises(BadRequest, match=r"level 'medium' is not allowed here \(at most low\)"):
        policy.check_reasoning({"extract": "medium"})
