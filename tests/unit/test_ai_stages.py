"""`reasoning` and `models` per stage (SPEC sections 5, 6 and 8)."""

import pytest

from gligabao.ai.stages import (
    QUERY_STAGES,
    REMEMBER_ALIASES,
    REMEMBER_IDLE_REASONING,
    REMEMBER_MODEL_STAGES,
    REMEMBER_STAGES,
    level_for,
    parse_level,
    parse_models,
    parse_reasoning,
)
from gligabao.errors import BadRequest


def test_no_reasoning_means_every_stage_at_none():
    reasoning = parse_reasoning(None, REMEMBER_STAGES, "extract")
    assert reasoning == {}
    assert level_for(reasoning, "extract") == "none"


def test_a_level_sets_the_operations_default_stage():
    assert parse_reasoning("low", REMEMBER_STAGES, "extract") == {"extract": "low"}
    assert parse_reasoning("high", QUERY_STAGES, "query") == {"query": "high"}


def test_levels_are_case_insensitive():
    assert parse_reasoning("MEDIUM", REMEMBER_STAGES, "extract") == {"extract": "medium"}


def test_an_object_sets_stages_one_by_one_and_leaves_the_others_at_none():
    reasoning = parse_reasoning({"extract": "high", "resolve": "Low"}, REMEMBER_STAGES, "extract")
    assert reasoning == {"extract": "high", "resolve": "low"}
    assert level_for(reasoning, "image") == "none"


def test_an_unknown_level_is_a_400_listing_the_levels():
    with pytest.raises(BadRequest) as raised:
        parse_reasoning("extreme", REMEMBER_STAGES, "extract")
    assert raised.value.status == 400
    assert raised.value.message == 'reasoning: unknown level "extreme" (use none, low, medium or high)'


def test_an_unknown_level_inside_an_object_is_a_400():
    with pytest.raises(BadRequest, match='unknown level "max"'):
        parse_reasoning({"resolve": "max"}, REMEMBER_STAGES, "extract")


@pytest.mark.parametrize("level", [3, None, True, ["low"]])
def test_a_level_that_is_not_a_string_is_a_400(level):
    with pytest.raises(BadRequest, match="reasoning: unknown level"):
        parse_level(level)


def test_a_query_stage_in_remember_is_a_400_naming_the_stage_and_its_operation():
    with pytest.raises(BadRequest) as raised:
        parse_reasoning({"query": "low"}, REMEMBER_STAGES, "extract")
    assert '"query"' in raised.value.message
    assert "stage of query, not of remember" in raised.value.message


def test_a_remember_stage_in_query_is_a_400_naming_the_stage_and_its_operation():
    with pytest.raises(BadRequest) as raised:
        parse_reasoning({"extract": "low"}, QUERY_STAGES, "query")
    assert '"extract"' in raised.value.message
    assert "stage of remember, not of query" in raised.value.message


def test_an_unknown_stage_is_a_400_listing_the_stages():
    with pytest.raises(BadRequest) as raised:
        parse_reasoning({"summarize": "low"}, REMEMBER_STAGES, "extract")
    assert raised.value.message == 'reasoning: unknown stage "summarize" (use extract, resolve or image)'


@pytest.mark.parametrize("value", [3, ["low"], True, 1.5])
def test_reasoning_that_is_neither_a_level_nor_an_object_is_a_400(value):
    with pytest.raises(BadRequest, match="reasoning: must be a level"):
        parse_reasoning(value, REMEMBER_STAGES, "extract")


def test_models_name_a_model_per_stage():
    models = {"extract": "claude-sonnet-4-5", "resolve": "us.anthropic.claude-haiku-4-5-20251001-v1:0"}
    assert parse_models(models, REMEMBER_STAGES) == models
    assert parse_models(None, REMEMBER_STAGES) == {}


@pytest.mark.parametrize("value", ["claude-sonnet-4-5", ["claude-sonnet-4-5"], 3])
def test_models_must_be_an_object(value):
    with pytest.raises(BadRequest, match="models: must be an object"):
        parse_models(value, REMEMBER_STAGES)


MALFORMED_MODEL_NAMES = ["", "-leading-dash", "has space", "semi;colon", "newline\n", "x" * 129, 42, None]


@pytest.mark.parametrize("name", MALFORMED_MODEL_NAMES)
def test_a_malformed_model_name_is_a_400(name):
    with pytest.raises(BadRequest, match='models: invalid model name for stage "extract"'):
        parse_models({"extract": name}, REMEMBER_STAGES)


def test_a_model_name_of_128_characters_is_accepted():
    assert parse_models({"query": "m" * 128}, QUERY_STAGES) == {"query": "m" * 128}


def test_models_for_a_stage_of_the_other_operation_are_a_400():
    with pytest.raises(BadRequest, match='models: "detect_geo" is a stage of query, not of remember'):
        parse_models({"detect_geo": "claude-haiku-4-5"}, REMEMBER_STAGES)


# --- the gligabao server's stage names (issue 39) --------------------------------------------


def _remember_reasoning(value):
    return parse_reasoning(
        value, REMEMBER_STAGES, "extract", aliases=REMEMBER_ALIASES, idle=REMEMBER_IDLE_REASONING
    )


def test_the_gligabao_servers_stage_names_are_aliases_of_remembers_stages():
    models = {
        "extract_graph": "claude-sonnet-4-5",
        "resolve_edges": "claude-haiku-5-5",
        "extract_image": "claude-opus-4-1",
    }
    assert parse_models(models, REMEMBER_STAGES, aliases=REMEMBER_ALIASES) == {
        "extract": "claude-sonnet-4-5",
        "resolve": "claude-haiku-5-5",
        "image": "claude-opus-4-1",
    }
    assert _remember_reasoning({"summarize_chunk": "low", "resolve_edges": "medium"}) == {
        "extract": "low",
        "resolve": "medium",
    }


def test_summarize_chunk_gives_way_to_the_extract_stage_named_otherwise():
    assert _remember_reasoning({"summarize_chunk": "none", "extract_graph": "high"}) == {"extract": "high"}
    assert _remember_reasoning({"extract": "low", "summarize_chunk": "high"}) == {"extract": "low"}


def test_two_names_of_one_stage_with_different_values_are_a_400():
    with pytest.raises(BadRequest, match='"extract" and "extract_graph" name the same stage'):
        _remember_reasoning({"extract": "low", "extract_graph": "high"})
    assert _remember_reasoning({"extract": "low", "extract_graph": "low"}) == {"extract": "low"}


def test_the_timeseries_stage_takes_a_level_and_a_model_like_the_others():
    assert _remember_reasoning({"resolve_series": "low", "resolve_edges": "low"}) == {
        "resolve": "low",
        "resolve_series": "low",
    }
    with pytest.raises(BadRequest, match='unknown level "max"'):
        _remember_reasoning({"resolve_series": "max"})
    assert parse_models(
        {"resolve_series": "claude-haiku-5-5"}, REMEMBER_MODEL_STAGES, aliases=REMEMBER_ALIASES
    ) == {"resolve_series": "claude-haiku-5-5"}
    with pytest.raises(BadRequest, match='unknown stage "resolve_series"'):  # not a stage of a text's own
        parse_models({"resolve_series": "claude-haiku-5-5"}, REMEMBER_STAGES, aliases=REMEMBER_ALIASES)


def test_the_aliases_are_remembers_only():
    with pytest.raises(BadRequest, match='unknown stage "extract_graph"'):
        parse_reasoning({"extract_graph": "low"}, QUERY_STAGES, "query")
