"""POST /v1/gb/remember with `facts` (bring your own facts): the caller's entities and edges take the
place of the extraction call; embedding, resolution, supersession, provenance, sessions, idempotency
and async are a text's. Every bad shape is a 400 that stores nothing and calls no model."""

from __future__ import annotations

import json

import pytest
from conftest import count_rows
from graph_rows import graph_counts
from remember_helpers import remember, stages_called

REFERENCE_TIME = "2025-01-31T09:00:00Z"
ALICE_AT_ACME = {
    "entities": [
        {"name": "Alice", "type": "person", "description": "engineer"},
        {"name": "Acme", "type": "organization"},
    ],
    "edges": [
        {
            "source": "Alice",
            "target": "Acme",
            "relation": "works_at",
            "description": "Alice works at Acme.",
            "valid_at": "2023-01-01T00:00:00Z",
        }
    ],
}


def remember_facts(api, facts: dict, **fields):
    return api.post("/v1/gb/remember", {"user_id": "u1", "facts": facts, **fields})


def test_facts_are_stored_as_a_text_s_extraction_with_no_extraction_call_and_one_embeddings_request(
    api, db, models
):
    fake_anthropic, fake_openai = models

    reply = remember_facts(api, ALICE_AT_ACME, session_id="import-1", reference_time=REFERENCE_TIME)

    assert reply.status == 200, reply.json
    body = reply.json
    assert [(e["name"], e["type"], e["description"], e["created"]) for e in body["entities"]] == [
        ("Alice", "person", "engineer", True),
        ("Acme", "organization", "", True),
    ]
    [edge] = body["edges"]
    assert (edge["source"], edge["relation"], edge["target"]) == ("Alice", "works_at", "Acme")
    assert edge["valid_at"] == "2023-01-01T00:00:00Z" and edge["artifact_id"] == body["artifact_id"]
    assert body["session_id"] == "import-1" and body["chunk_count"] == 0
    assert fake_anthropic.messages == []  # no extraction, and nothing stored to resolve against
    [embeddings] = fake_openai.embedding_requests
    assert embeddings["input"] == [
        "Alice (person): engineer",
        "Acme (organization): ",
        "Alice works_at Acme: Alice works at Acme.",
    ]
    kind, text, session = db.execute("SELECT kind, text, session_id FROM gb_artifacts").fetchone()
    assert (kind, session) == ("facts", "import-1")
    assert json.loads(text) == ALICE_AT_ACME  # the facts as given
    assert count_rows(db, "gb_entity_artifacts") == 2 and count_rows(db, "gb_edge_artifacts") == 1
    assert count_rows(db, "gb_entity_sessions") == 2 and count_rows(db, "gb_edge_sessions") == 1
    stages = [row[0] for row in db.execute("SELECT stage FROM gb_inferences ORDER BY id")]
    assert stages == ["embed"]


def test_facts_resolve_against_what_is_known_and_supersede_a_contradicted_fact(api, db, models):
    fake_anthropic, _ = models
    first = remember(api, "Alice lives in Paris.", reference_time="2024-01-01T00:00:00Z")
    [paris] = first["edges"]
    calls_before = len(fake_anthropic.messages)

    reply = remember_facts(
        api,
        {
            "entities": [{"name": "Alice"}, {"name": "Rome", "type": "city"}],
            "edges": [{"source": "Alice", "target": "Rome", "relation": "Lives In"}],
        },
        reference_time="2025-01-01T00:00:00Z",
    )

    assert reply.status == 200, reply.json
    body = reply.json
    alice = next(e for e in body["entities"] if e["name"] == "Alice")
    assert alice["created"] is False and alice["id"] == paris["source_id"]
    [rome] = body["edges"]
    assert rome["relation"] == "lives_in" and rome["valid_at"] == "2025-01-01T00:00:00Z"
    assert [s["id"] for s in body["superseded"]] == [paris["id"]]
    assert body["superseded"][0]["invalid_at"] == "2025-01-01T00:00:00Z"
    assert stages_called(fake_anthropic)[calls_before:] == ["resolve"]  # no extract


def test_facts_restating_a_stored_fact_create_nothing_new(api, db, models):
    assert remember_facts(api, ALICE_AT_ACME).status == 200

    again = remember_facts(api, ALICE_AT_ACME).json

    assert [e["created"] for e in again["entities"]] == [False, False]
    assert [e["created"] for e in again["edges"]] == [False]
    assert graph_counts(db)["gb_edges"] == 1 and count_rows(db, "gb_artifacts") == 2


def test_an_idempotency_key_replays_a_facts_remember_without_storing_again(api, db, models):
    _, fake_openai = models
    key = {"Idempotency-Key": "import-7"}
    body = {"user_id": "u1", "facts": ALICE_AT_ACME}

    first = api.post("/v1/gb/remember", body, headers=key)
    second = api.post("/v1/gb/remember", body, headers=key)

    assert first.status == second.status == 200
    assert second.json == first.json and second.headers.get("idempotent-replayed") == "true"
    assert count_rows(db, "gb_artifacts") == 1 and len(fake_openai.embedding_requests) == 1


def test_async_facts_are_202_then_done_by_the_worker(api, db, models, local_jobs):
    fake_anthropic, _ = models

    reply = remember_facts(api, ALICE_AT_ACME, session_id="s1", **{"async": True})

    assert reply.status == 202
    assert local_jobs.wait_until_empty(30)
    artifact = api.get(f"/v1/gb/artifacts/{reply.json['artifact_id']}?user_id=u1").json
    assert artifact["status"] == "done" and artifact["kind"] == "facts"
    assert sorted(e["name"] for e in artifact["entities"]) == ["Acme", "Alice"]
    assert [e["relation"] for e in artifact["edges"]] == ["works_at"]
    assert fake_anthropic.messages == []


def _too_many(limit_name: str) -> dict:
    from gligabao.limits import DEFAULT_LIMITS

    count = getattr(DEFAULT_LIMITS, limit_name) + 1
    entities = [{"name": f"Person {i}"} for i in range(count)]
    if limit_name == "facts_max_entities":
        return {"entities": entities}
    edges = [{"source": "Person 0", "target": "Person 1", "relation": f"knows_{i}"} for i in range(count)]
    return {"entities": entities[:2], "edges": edges}


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        (
            {"facts": {**ALICE_AT_ACME, "edges": [{**ALICE_AT_ACME["edges"][0], "target": "Bob"}]}},
            'facts: edges.0.target: "Bob" is not one of the entities',
        ),
        ({"facts": {"entities": [{"name": "  "}]}}, "facts.entities.0.name: must not be empty"),
        ({"facts": {"entities": []}}, "facts: entities: at least one entity is required"),
        ({"facts": {"edges": []}}, "facts.entities is required"),
        (
            {"facts": {**ALICE_AT_ACME, "edges": [{**ALICE_AT_ACME["edges"][0], "relation": " - "}]}},
            "facts.edges.0.relation: must name the relation (letters or digits)",
        ),
        (
            {"facts": {**ALICE_AT_ACME, "edges": [{**ALICE_AT_ACME["edges"][0], "valid_at": "2023-01-01"}]}},
            "facts.edges.0.valid_at: must be an RFC 3339 time with an offset, e.g. 2023-01-01T00:00:00Z",
        ),
        (
            {
                "facts": {
                    **ALICE_AT_ACME,
                    "edges": [{**ALICE_AT_ACME["edges"][0], "invalid_at": "2022-01-01T00:00:00Z"}],
                }
            },
            "facts.edges.0: invalid_at is before valid_at",
        ),
        ({"facts": {**ALICE_AT_ACME, "summary": "x"}}, "facts.summary: unknown field"),
        (
            {"facts": ALICE_AT_ACME, "text": "Alice works at Acme."},
            "exactly one of text, image and facts is required",
        ),
        ({"facts": ALICE_AT_ACME, "caption": "a caption"}, "caption is only for an image"),
        (
            {"facts": ALICE_AT_ACME, "eval": True},
            "eval: trajectories are recorded for texts and images, not facts",
        ),
        ({"facts": _too_many("facts_max_entities")}, "facts.entities: at most 500 entities per remember"),
        ({"facts": _too_many("facts_max_edges")}, "facts.edges: at most 500 edges per remember"),
        (
            {"facts": {"entities": [{"name": "A" * 201}]}},
            "facts.entities.0.name: longer than 200 characters",
        ),
    ],
)
def test_a_bad_facts_body_is_a_400_naming_the_problem_that_stores_nothing_and_calls_no_model(
    api, db, models, fields, error
):
    fake_anthropic, fake_openai = models

    reply = api.post("/v1/gb/remember", {"user_id": "u1", **fields})

    assert reply.status == 400
    assert reply.json == {"error": error}
    assert graph_counts(db) == {table: 0 for table in graph_counts(db)}
    assert count_rows(db, "gb_artifacts") == 0 and count_rows(db, "gb_datasets") == 0
    assert fake_anthropic.messages == [] and fake_openai.embedding_requests == []


def test_facts_need_the_provider_keys_like_a_text(api, db):
    reply = remember_facts(api, ALICE_AT_ACME)

    assert reply.status == 503
    assert count_rows(db, "gb_artifacts") == 0
