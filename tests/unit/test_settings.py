"""All configuration is one model over the environment; the seed's numbers are overridable."""

import pytest

from gligabao import bootstrap
from gligabao.errors import NotConfigured
from gligabao.limits import DEFAULT_LIMITS, Limits
from gligabao.settings import InvalidConfiguration, Settings


def test_the_defaults_are_the_seeds_numbers():
    limits = Settings.from_env({}).limits
    assert (limits.keyword_seeds, limits.similarity_threshold, limits.expansion_edges) == (10, 0.75, 100)
    assert (limits.whole_name_score, limits.term_in_name_score, limits.term_in_description_score) == (5, 3, 1)
    assert limits == DEFAULT_LIMITS


def test_every_limit_is_overridable_by_its_variable():
    numbers = [name for name, field in Limits.model_fields.items() if field.annotation in (int, float)]
    # cosines, and the shares of 0 to 1 (a seed's strength, the walk's damping)
    cosines = {name for name in numbers if "similarity" in name} | {
        "rank_path_seed_strength",
        "rank_pagerank_damping",
    }
    env = {f"GB_{name.upper()}": "0.5" if name in cosines else "7" for name in numbers}
    limits = Settings.from_env({**env, "GB_RETRIEVAL": " Seed "}).limits
    assert all(float(getattr(limits, name)) == (0.5 if name in cosines else 7) for name in numbers)
    assert limits.retrieval == "seed"


def test_the_retrieval_is_ranked_unless_set_to_the_seeds_and_nothing_else():
    assert Settings.from_env({}).limits.retrieval == "ranked"
    with pytest.raises(InvalidConfiguration, match="GB_RETRIEVAL"):
        Settings.from_env({"GB_RETRIEVAL": "fastest"})


def test_the_provider_variables_are_the_sdks_own_names():
    settings = Settings.from_env(
        {"ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_BASE_URL": "http://o", "GB_GEO": "on"}
    )
    assert settings.anthropic_api_key.get_secret_value() == "sk-ant-x"
    assert "sk-ant-x" not in repr(settings)
    assert (settings.openai_base_url, settings.geo) == ("http://o", True)


def test_the_auth_mode_is_iam_unless_the_environment_says_otherwise():
    assert Settings.from_env({}).auth_mode == "iam"
    settings = Settings.from_env(
        {"GB_AUTH_MODE": " JWT ", "GB_JWT_ISSUER": "https://i", "GB_JWT_AUDIENCE": "a,b", "GB_JWKS": "k.json"}
    )
    assert (settings.auth_mode, settings.jwt_issuer, settings.jwt_audience, settings.jwks) == (
        "jwt",
        "https://i",
        "a,b",
        "k.json",
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("GB_SIMILARITY_THRESHOLD", "high"),
        ("GB_KEYWORD_SEEDS", "0"),
        ("GB_EMBEDDING_DIMENSIONS", "-3"),
        ("GB_LLM_PROVIDER", "vertex"),
        ("GB_AUTH_MODE", "cognito"),
        ("GB_HNSW_CANDIDATES", "1001"),  # wider than pgvector's hnsw.ef_search allows
        ("GB_HNSW_FACT_CANDIDATES", "1001"),
        ("GB_POSTGRES_VERSION", "17"),  # the embedded PostgreSQL ships 16 and 18
    ],
)
def test_a_value_the_service_cannot_use_is_named(variable, value):
    with pytest.raises(InvalidConfiguration, match=f"^configuration invalid: {variable}: "):
        Settings.from_env({variable: value})


def test_a_container_with_an_invalid_variable_answers_503_naming_it(monkeypatch):
    monkeypatch.setenv("GB_EXPANSION_EDGES", "many")
    bootstrap.install(None)
    with pytest.raises(NotConfigured, match="GB_EXPANSION_EDGES") as raised:
        bootstrap.bundle()
    assert raised.value.status == 503


def test_an_embedding_size_beyond_what_an_hnsw_vector_index_takes_is_refused():
    from gligabao.limits import HNSW_MAX_VECTOR_DIMENSIONS

    assert Settings().embedding_dimensions <= HNSW_MAX_VECTOR_DIMENSIONS
    assert Settings.from_env(
        {"GB_EMBEDDING_DIMENSIONS": str(HNSW_MAX_VECTOR_DIMENSIONS)}
    ).embedding_dimensions == (HNSW_MAX_VECTOR_DIMENSIONS)
    with pytest.raises(InvalidConfiguration) as raised:
        Settings.from_env({"GB_EMBEDDING_DIMENSIONS": str(HNSW_MAX_VECTOR_DIMENSIONS + 1)})
    assert str(raised.value) == (
        "configuration invalid: GB_EMBEDDING_DIMENSIONS: "
        "Value error, at most 2000 (the HNSW index of a pgvector vector column)"
    )


@pytest.mark.parametrize(
    ("value", "on"), [("true", True), (" ON ", True), ("1", True), ("no", False), ("off", False)]
)
def test_web_search_is_a_switch_off_by_default(value, on):
    assert Settings.from_env({}).web_search is False
    assert Settings.from_env({"GB_WEB_SEARCH": value}).web_search is on


def test_a_web_search_switch_that_is_neither_is_a_configuration_error_not_off():
    with pytest.raises(InvalidConfiguration, match="GB_WEB_SEARCH"):
        Settings.from_env({"GB_WEB_SEARCH": "ture"})
