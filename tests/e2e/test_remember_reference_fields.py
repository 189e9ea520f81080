"""The fields the reference server's responses carry, beside ours (issue 39, point 2): remember
answers with `user_id`, `kind`, `valid_at`, `created_at`, `invalidated_edges` and a `model_id` on
every entity and edge; query evidence and the read-back routes carry `model_id` too. The model is
the one that extracted the row (the extract stage's, an image's image stage's), stored with it."""

from __future__ import annotations

from datetime import UTC, datetime

from conftest import reconfigure
from image_files import image_body, image_file
from query_helpers import ask
from remember_helpers import remember, stage_of

from gligabao.timefmt import rfc3339

REFERENCE_TIME = "2025-01-31T09:00:00Z"
CONFIGURED = "claude-haiku-5-5"  # GB_LLM_MODEL's default
REQUESTED = "claude-sonnet-4-6"


def models_of_calls(fake_anthropic, stage: str) -> list[str]:
    """The model named by each call of a stage the fake provider received."""
    return [body["model"] for body in fake_anthropic.messages if stage_of(body) == stage]


def stored_models(db) -> dict[str, str | None]:
    """Each stored entity's and edge's model, by the entity's name or the edge's relation."""
    rows = db.execute(
        "SELECT name, model_id FROM gb_entities UNION ALL SELECT relation, model_id FROM gb_edges"
    ).fetchall()
    return dict(rows)


def test_remember_answers_whose_text_it_is_its_kind_and_when_it_was_said_and_stored(api, db, models):
    body = remember(api, "Alice works at Acme.", reference_time=REFERENCE_TIME)

    [created_at] = db.execute(
        "SELECT created_at FROM gb_artifacts WHERE id = %s", [body["artifact_id"]]
    ).fetchone()
    assert body["user_id"] == "u1"
    assert body["kind"] == "knowledge"
    assert body["valid_at"] == REFERENCE_TIME
    assert body["created_at"] == rfc3339(created_at)
    assert body["invalidated_edges"] == []


def test_valid_at_is_the_time_of_the_remember_without_a_reference_time(api, db, models):
    before = datetime.now(UTC)
    body = remember(api, "Alice works at Acme.")

    assert before <= datetime.fromisoformat(body["valid_at"]) <= datetime.now(UTC)
    assert body["edges"][0]["valid_at"] == body["valid_at"]


def test_a_superseded_fact_is_among_the_invalidated_edges_with_its_invalid_at(api, db, models):
    paris = remember(api, "Alice lives in Paris.", reference_time="2020-01-01T00:00:00Z")["edges"][0]

    body = remember(api, "Alice moved to Lyon in 2024.", reference_time=REFERENCE_TIME)

    assert body["invalidated_edges"] == [paris["id"]]
    [superseded] = body["superseded"]  # ours stays, with the ends of each
    assert superseded["id"] == paris["id"]
    assert superseded["invalid_at"] == "2024-01-01T00:00:00Z"
    [invalid_at] = db.execute("SELECT invalid_at FROM gb_edges WHERE id = %s", [paris["id"]]).fetchone()
    assert rfc3339(invalid_at) == "2024-01-01T00:00:00Z"


def test_an_edge_only_closed_by_a_restatement_is_not_invalidated(api, db, models):
    remember(api, "Alice works at Acme.", reference_time="2020-01-01T00:00:00Z")

    body = remember(api, "Alice left Acme in 2024.", reference_time=REFERENCE_TIME)

    assert body["superseded"] == [] and body["invalidated_edges"] == []
    assert body["edges"][0]["invalid_at"] == "2024-01-01T00:00:00Z"


def test_every_entity_and_edge_carries_the_configured_extract_model(api, db, fake_anthropic, models):
    body = remember(api, "Alice is an engineer. Alice works at Acme.", reference_time=REFERENCE_TIME)

    assert models_of_calls(fake_anthropic, "extract") == [CONFIGURED]
    assert [e["model_id"] for e in body["entities"]] == [CONFIGURED, CONFIGURED]
    assert [e["model_id"] for e in body["edges"]] == [CONFIGURED]
    assert stored_models(db) == {"Alice": CONFIGURED, "Acme": CONFIGURED, "works_at": CONFIGURED}


def test_the_requested_extract_model_is_stored_with_what_it_extracted(api, db, fake_anthropic, models):
    reconfigure(allowed_models=f"{CONFIGURED}, {REQUESTED}")
    remember(api, "Alice works at Acme.")

    body = remember(api, "Alice lives in Paris.", models={"extract": REQUESTED})

    assert models_of_calls(fake_anthropic, "extract") == [CONFIGURED, REQUESTED]
    alice, paris = body["entities"]
    assert (alice["created"], alice["model_id"]) == (False, CONFIGURED)  # keeps the model that found it
    assert (paris["created"], paris["model_id"]) == (True, REQUESTED)
    assert [e["model_id"] for e in body["edges"]] == [REQUESTED]
    assert stored_models(db) == {
        "Alice": CONFIGURED,
        "Acme": CONFIGURED,
        "works_at": CONFIGURED,
        "Paris": REQUESTED,
        "lives_in": REQUESTED,
    }


def test_a_restated_fact_keeps_the_model_that_extracted_it(api, db, models):
    reconfigure(allowed_models=f"{CONFIGURED}, {REQUESTED}")
    first = remember(api, "Alice works at Acme.")["edges"][0]

    [again] = remember(api, "Alice works at Acme.", models={"extract": REQUESTED})["edges"]

    assert (again["id"], again["created"], again["model_id"]) == (first["id"], False, CONFIGURED)


def test_the_callers_own_facts_carry_no_model(api, db, models):
    reply = api.post(
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "facts": {
                "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
                "edges": [{"source": "Alice", "target": "Acme", "relation": "works_at"}],
            },
            "reference_time": REFERENCE_TIME,
        },
    )

    assert reply.status == 200, reply.json
    body = reply.json
    assert (body["user_id"], body["kind"], body["valid_at"]) == ("u1", "knowledge", REFERENCE_TIME)
    assert all("model_id" not in item for item in (*body["entities"], *body["edges"]))
    assert stored_models(db) == {"Alice": None, "Acme": None, "works_at": None}


def test_an_images_entities_and_edges_carry_the_image_stages_model(api, db, fake_anthropic, models):
    reconfigure(allowed_models=f"{CONFIGURED}, {REQUESTED}")
    request = image_body(
        image_file(),
        caption="Alice works at Acme.",
        models={"image": REQUESTED},
        reference_time=REFERENCE_TIME,
    )

    first = api.post("/v1/gb/remember", request)
    repeated = api.post("/v1/gb/remember", request)

    assert first.status == repeated.status == 200, (first.json, repeated.json)
    assert models_of_calls(fake_anthropic, "image") == [REQUESTED]
    for body in (first.json, repeated.json):  # a repeat answers with the first remember's fields
        assert [e["model_id"] for e in body["entities"]] == [REQUESTED, REQUESTED]
        assert [e["model_id"] for e in body["edges"]] == [REQUESTED]
        assert (body["user_id"], body["valid_at"]) == ("u1", REFERENCE_TIME)
    assert repeated.json["created_at"] == first.json["created_at"]
    assert stored_models(db) == {"Alice": REQUESTED, "Acme": REQUESTED, "works_at": REQUESTED}


def test_query_evidence_carries_the_model_of_its_entities_and_edges(api, db, models):
    reconfigure(allowed_models=f"{CONFIGURED}, {REQUESTED}")
    remember(api, "Alice works at Acme.", models={"extract": REQUESTED})

    response = ask(api, "Where does Alice work?")

    assert response.status == 200, response.json
    evidence = response.json["evidence"]
    assert {e["name"]: e["model_id"] for e in evidence["entities"]} == {"Alice": REQUESTED, "Acme": REQUESTED}
    assert [(e["relation"], e["model_id"]) for e in evidence["edges"]] == [("works_at", REQUESTED)]


def test_the_read_back_routes_carry_the_model_of_each_entity_and_edge(api, db, models):
    body = remember(api, "Alice works at Acme.", session_id="a")
    alice = body["entities"][0]["id"]

    session = api.get("/v1/gb/sessions/a?user_id=u1").json
    artifact = api.get(f"/v1/gb/artifacts/{body['artifact_id']}?user_id=u1").json
    entity = api.get(f"/v1/gb/entities/{alice}?user_id=u1").json
    graph = api.get("/v1/gb/graph?user_id=u1").json

    for found in (session, artifact, graph):
        assert [e["model_id"] for e in found["entities"]] == [CONFIGURED, CONFIGURED]
        assert [e["model_id"] for e in found["edges"]] == [CONFIGURED]
    assert entity["model_id"] == CONFIGURED
    assert [e["model_id"] for e in entity["edges"]] == [CONFIGURED]
