"""A request names only the models the deployment allows (GB_ALLOWED_MODELS, by default the model
it is configured with) and reasons at most at GB_MAX_REASONING (by default none): the operator pays
for every call. Anything else is a 400 naming the model or the level, before any model is called
and before anything is stored, on every route that takes `models` or `reasoning`."""

from __future__ import annotations

import pytest
from conftest import count_rows, reconfigure
from graph_rows import graph_counts
from image_files import image_body, image_file
from query_helpers import alice_works_at_acme

EXPENSIVE = "claude-opus-4-5"
CONFIGURED = "claude-haiku-5-5"  # GB_LLM_MODEL's default
NOT_ALLOWED = f"models: model '{EXPENSIVE}' is not allowed here (allowed: {CONFIGURED})"
TOO_HIGH = "reasoning: level 'high' is not allowed here (at most none)"
TEXT = {"user_id": "u1", "dataset": "main", "text": "Alice works at Acme.", "session_id": "a"}
QUESTION = {"user_id": "u1", "query": "Where does Alice work?"}

# Every body a route takes `models` and `reasoning` in: remember a text, an image, facts, async,
# eval; the batch; query, with eval and without an answer.
BODIES = {
    "remember text": ("/v1/gb/remember", TEXT, "extract"),
    "remember text eval": ("/v1/gb/remember", {**TEXT, "eval": True}, "extract"),
    "remember text async": ("/v1/gb/remember", {**TEXT, "async": True}, "resolve"),
    "remember image": ("/v1/gb/remember", image_body(image_file()), "image"),
    "remember facts": (
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "facts": {
                "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
                "edges": [
                    {
                        "source": "Alice",
                        "target": "Acme",
                        "relation": "works_at",
                        "description": "Alice works at Acme.",
                    }
                ],
            },
        },
        "resolve",
    ),
    "remember batch": (
        "/v1/gb/remember/batch",
        {"user_id": "u1", "texts": [{"text": "Alice works at Acme."}]},
        "extract",
    ),
    "query": ("/v1/gb/query", QUESTION, "query"),
    "query eval": ("/v1/gb/query", {**QUESTION, "eval": True}, "query"),
    "query without answer": ("/v1/gb/query", {**QUESTION, "answer": False}, "query"),
}


def stored(db) -> dict[str, int]:
    """The rows of every table a request can write: the graph, inferences, trajectories, keys."""
    tables = ("gb_inferences", "gb_trajectories", "gb_image_artifacts", "gb_idempotency_records")
    return {**graph_counts(db), **{table: count_rows(db, table) for table in tables}}


@pytest.fixture
def graph(db, models, local_jobs):
    """Alice works at Acme, written to the database (no model call): what a refused request leaves."""
    alice_works_at_acme(db)
    return stored(db)


def no_call_reached(models) -> bool:
    fake_anthropic, fake_openai = models
    return fake_anthropic.requests == [] and fake_openai.requests == []


@pytest.mark.parametrize("route", BODIES)
def test_the_expensive_model_with_high_reasoning_is_400_naming_it_with_no_call_and_nothing_stored(
    api, db, models, graph, local_jobs, route
):
    path, body, stage = BODIES[route]

    reply = api.post(path, {**body, "models": {stage: EXPENSIVE}, "reasoning": {stage: "high"}})

    assert reply.status == 400
    assert reply.json["error"] in (NOT_ALLOWED, TOO_HIGH)
    assert local_jobs.wait_until_empty(30)
    assert no_call_reached(models)
    assert stored(db) == graph


@pytest.mark.parametrize("route", BODIES)
def test_a_model_not_allowed_is_400_naming_it(api, db, models, graph, local_jobs, route):
    path, body, stage = BODIES[route]

    reply = api.post(path, {**body, "models": {stage: EXPENSIVE}})

    assert (reply.status, reply.json) == (400, {"error": NOT_ALLOWED})
    assert local_jobs.wait_until_empty(30)
    assert no_call_reached(models)
    assert stored(db) == graph


@pytest.mark.parametrize("route", BODIES)
def test_reasoning_above_the_maximum_is_400_naming_the_level(api, db, models, graph, local_jobs, route):
    path, body, stage = BODIES[route]

    reply = api.post(path, {**body, "reasoning": {stage: "high"}})

    assert (reply.status, reply.json) == (400, {"error": TOO_HIGH})
    assert local_jobs.wait_until_empty(30)
    assert no_call_reached(models)
    assert stored(db) == graph


def test_one_level_for_the_main_stage_is_held_to_the_maximum_too(api, db, models, graph):
    for path, body, _ in (BODIES["remember text"], BODIES["remember image"], BODIES["query"]):
        reply = api.post(path, {**body, "reasoning": "LOW"})

        assert reply.status == 400
        assert "level 'low' is not allowed here" in reply.json["error"]
    assert no_call_reached(models)
    assert stored(db) == graph


def test_the_configured_model_and_no_reasoning_are_allowed_by_default(api, db, models):
    fake_anthropic, _ = models

    reply = api.post("/v1/gb/remember", {**TEXT, "models": {"extract": CONFIGURED}, "reasoning": "none"})

    assert reply.status == 200
    assert {body["model"] for body in fake_anthropic.messages} == {CONFIGURED}


def test_the_default_allows_the_model_the_deployment_is_configured_with(api, db, models):
    reconfigure(llm_model="claude-sonnet-4-6")

    allowed = api.post("/v1/gb/remember", {**TEXT, "models": {"extract": "claude-sonnet-4-6"}})
    refused = api.post("/v1/gb/remember", {**TEXT, "models": {"extract": CONFIGURED}})

    assert allowed.status == 200
    assert (refused.status, refused.json) == (
        400,
        {"error": f"models: model '{CONFIGURED}' is not allowed here (allowed: claude-sonnet-4-6)"},
    )


def test_the_operator_allows_more_models_and_a_higher_level(api, db, models):
    fake_anthropic, _ = models
    reconfigure(allowed_models="claude-haiku-5-5, claude-sonnet-4-6", max_reasoning="medium")

    reply = api.post(
        "/v1/gb/remember",
        {**TEXT, "models": {"extract": "claude-sonnet-4-6"}, "reasoning": {"extract": "medium"}},
    )
    above = api.post("/v1/gb/remember", {**TEXT, "reasoning": {"resolve": "high"}})
    other = api.post("/v1/gb/remember", {**TEXT, "models": {"resolve": EXPENSIVE}})

    assert reply.status == 200
    assert fake_anthropic.messages[0]["model"] == "claude-sonnet-4-6"
    assert (above.status, above.json["error"]) == (
        400,
        "reasoning: level 'high' is not allowed here (at most medium)",
    )
    assert (other.status, other.json["error"]) == (
        400,
        f"models: model '{EXPENSIVE}' is not allowed here (allowed: claude-haiku-5-5, claude-sonnet-4-6)",
    )
