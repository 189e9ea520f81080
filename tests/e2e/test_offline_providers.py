"""The offline providers (GB_LLM_PROVIDER=offline, GB_EMBEDDING_PROVIDER=offline) over the local
API: the main job with no key, no fake and no network; every recorded model says offline."""

from __future__ import annotations

import pytest
from conftest import count_rows, reconfigure
from image_files import image_body, image_file


@pytest.fixture
def offline(db):
    reconfigure(llm_provider="offline", embedding_provider="offline")
    return db


def remember(api, text: str, reference_time: str, **fields) -> dict:
    reply = api.post(
        "/v1/gb/remember", {"user_id": "u1", "text": text, "reference_time": reference_time, **fields}
    )
    assert reply.status == 200, reply.json
    return reply.json


def test_remember_then_query_answers_from_the_live_fact(api, offline):
    first = remember(api, "Alice works at Acme and lives in Paris.", "2024-01-10T09:00:00Z")
    assert sorted((e["source"], e["relation"], e["target"]) for e in first["edges"]) == [
        ("Alice", "lives_in", "Paris"),
        ("Alice", "works_at", "Acme"),
    ]
    second = remember(api, "Alice moved to Lyon in 2025.", "2025-03-01T09:00:00Z")
    paris = next(e["id"] for e in first["edges"] if e["target"] == "Paris")
    assert [s["id"] for s in second["superseded"]] == [paris]

    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice live?"})

    assert reply.status == 200, reply.json
    assert reply.json["answer"] == "Alice moved to Lyon in 2025."
    lyon = next(e["id"] for e in second["edges"] if e["target"] == "Lyon")
    assert [e["id"] for e in reply.json["evidence"]["edges"]] == [lyon]


def test_every_recorded_model_says_offline(api, offline):
    remember(api, "Bob works at Initech.", "2024-01-10T09:00:00Z")
    api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Bob work?"})

    rows = offline.execute("SELECT stage, model, cost_usd FROM gb_inferences").fetchall()
    assert {(stage, model) for stage, model, _ in rows} == {
        ("extract", "offline"),
        ("embed", "offline-hash"),
        ("query", "offline"),
    }
    assert {cost for _, _, cost in rows} == {0}


def test_an_image_is_refused_with_a_503_that_names_the_key_and_nothing_is_stored(api, offline):
    reply = api.post("/v1/gb/remember", image_body(image_file()))

    assert reply.status == 503, reply.json
    assert reply.json["error"] == (
        "images need a vision model: the offline LLM reads text only (set ANTHROPIC_API_KEY)"
    )
    assert count_rows(offline, "gb_artifacts") == 0
    assert count_rows(offline, "gb_edges") == 0
