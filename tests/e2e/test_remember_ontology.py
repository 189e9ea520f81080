"""remember into a dataset with an ontology, over HTTP: extraction is told the allowed types and
relations; what the model extracts outside them is mapped to the nearest allowed one or dropped,
as the ontology says, and the response counts it. The extraction replies are scripted with types
and relations outside the ontology (people, organizations and places; worksFor and livesIn)."""

from __future__ import annotations

from image_files import image_body, image_file
from ontology_helpers import PEOPLE_JSON, register
from remember_helpers import prompt_of, remember, stages_called

OUTSIDE = {
    "entities": [
        {"name": "Alice", "type": "person", "description": "engineer"},
        {"name": "Acme", "type": "Company", "description": "a maker of anvils"},
        {"name": "Paris", "type": "city", "description": ""},
        {"name": "Rex", "type": "Animal", "description": "Alice's dog"},
    ],
    "edges": [
        {
            "source": "Alice",
            "target": "Acme",
            "relation": "employed_by",
            "description": "Alice works at Acme.",
        },
        {
            "source": "Alice",
            "target": "Paris",
            "relation": "lives_in",
            "description": "Alice lives in Paris.",
        },
        {"source": "Alice", "target": "Rex", "relation": "owns", "description": "Alice has a dog, Rex."},
    ],
}
TEXT = "Alice works at Acme and lives in Paris with her dog Rex."


def _stored(db) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    entities = dict(db.execute("SELECT name, type FROM gb_entities ORDER BY name").fetchall())
    edges = db.execute(
        "SELECT s.name, g.relation, t.name FROM gb_edges g JOIN gb_entities s ON s.id = g.source_id "
        "JOIN gb_entities t ON t.id = g.target_id ORDER BY g.relation"
    ).fetchall()
    return entities, [tuple(e) for e in edges]


def test_outside_types_map_to_the_nearest_allowed_ones_and_what_is_near_none_is_dropped(api, db, models):
    fake_anthropic, fake_openai = models
    register(api, dataset="main")  # the OWL ontology, out_of_ontology "map"
    fake_anthropic.queue(OUTSIDE)

    body = remember(api, TEXT)

    assert body["ontology"] == {
        "name": "people",
        "mapped_entity_types": 2,  # Company -> organization, city -> place (by embeddings)
        "dropped_entities": 1,  # Animal: near no allowed type
        "mapped_relations": 1,  # employed_by -> works_for: the one relation from a person to an organization
        "dropped_relations": 1,  # owns: its target was dropped
    }
    entities, edges = _stored(db)
    assert entities == {"Acme": "organization", "Alice": "person", "Paris": "place"}
    assert edges == [("Alice", "lives_in", "Paris"), ("Alice", "works_for", "Acme")]
    assert {e["name"]: e["type"] for e in body["entities"]} == entities
    assert sorted(e["relation"] for e in body["edges"]) == ["lives_in", "works_for"]
    # The prompt told the model the ontology; the names were compared in one embeddings request.
    [extract] = [m for m in fake_anthropic.messages if "<ontology>" in prompt_of(m)]
    prompt = prompt_of(extract)
    assert "- organization: a company, institution or association" in prompt
    assert "- works_for (person -> organization): the person is employed by the organization" in prompt
    assert "nearest" in prompt
    [compared] = [r for r in fake_openai.embedding_requests if "company" in r["input"]]
    assert (
        "animal" in compared["input"]
        and "Organization: a company, institution or association" in compared["input"]
    )
    assert stages_called(fake_anthropic) == ["extract"]
    stages = [row[0] for row in db.execute("SELECT stage FROM gb_inferences ORDER BY id").fetchall()]
    assert stages == ["extract", "embed", "embed"]


def test_drop_mode_keeps_only_the_allowed_names_and_aliases(api, db, models):
    fake_anthropic, fake_openai = models
    form = {
        "entity_types": [
            PEOPLE_JSON["entity_types"][0],
            {**PEOPLE_JSON["entity_types"][1], "aliases": ["Company"]},
            PEOPLE_JSON["entity_types"][2],
        ],
        "relation_types": [
            {**PEOPLE_JSON["relation_types"][0], "aliases": ["employedBy"]},
            PEOPLE_JSON["relation_types"][1],
        ],
    }
    register(api, "strict", **form, out_of_ontology="drop", dataset="main")
    fake_anthropic.queue(OUTSIDE)

    body = remember(api, TEXT)

    assert body["ontology"] == {
        "name": "strict",
        "mapped_entity_types": 1,  # Company, an alias of Organization
        "dropped_entities": 2,  # city and Animal are not allowed names
        "mapped_relations": 1,  # employed_by, an alias of worksFor
        "dropped_relations": 2,  # lives_in (Paris dropped), owns (Rex dropped)
    }
    entities, edges = _stored(db)
    assert entities == {"Acme": "organization", "Alice": "person"}
    assert edges == [("Alice", "works_for", "Acme")]
    assert "Leave out an entity of none of these types" in prompt_of(fake_anthropic.messages[0])
    assert len(fake_openai.embedding_requests) == 1  # drop mode compares nothing by similarity


def test_a_fact_whose_ends_do_not_fit_the_relations_domain_and_range_is_dropped(api, db, models):
    fake_anthropic, _ = models
    register(api, dataset="main")
    fake_anthropic.queue(
        {
            "entities": [{"name": "Acme", "type": "organization"}, {"name": "Alice", "type": "person"}],
            "edges": [{"source": "Acme", "target": "Alice", "relation": "worksFor", "description": "?"}],
        }
    )

    body = remember(api, "Acme works for Alice.")

    assert body["ontology"]["dropped_relations"] == 1
    assert body["edges"] == []
    assert _stored(db)[1] == []


def test_without_an_ontology_nothing_is_mapped_and_the_response_has_no_ontology(api, db, models):
    fake_anthropic, _ = models
    register(api)  # registered, attached to no dataset
    fake_anthropic.queue(OUTSIDE)

    body = remember(api, TEXT)

    assert "ontology" not in body
    assert _stored(db)[0]["Rex"] == "animal"
    assert "<ontology>" not in prompt_of(fake_anthropic.messages[0])


def test_another_users_dataset_of_the_same_name_is_not_steered(api, db, models):
    fake_anthropic, _ = models
    register(api, user_id="u2", dataset="main")
    fake_anthropic.queue(OUTSIDE)

    body = remember(api, TEXT)  # u1's main

    assert "ontology" not in body
    assert len(_stored(db)[0]) == 4


def test_query_context_shows_the_mapped_types(api, db, models):
    fake_anthropic, _ = models
    register(api, dataset="main")
    fake_anthropic.queue(OUTSIDE)
    remember(api, TEXT)

    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})

    assert reply.status == 200, reply.json
    query_prompt = prompt_of(fake_anthropic.messages[-1])
    assert "Acme (organization)" in query_prompt
    assert "Alice (person)" in query_prompt


def test_an_images_extraction_is_told_the_ontology_and_conformed_to_it(api, db, models):
    fake_anthropic, _ = models
    register(api, dataset="main")
    fake_anthropic.queue({"description": "Alice at her desk at Acme.", **OUTSIDE})

    reply = api.post("/v1/gb/remember", image_body(image_file()))

    assert reply.status == 200, reply.json
    assert reply.json["ontology"]["dropped_entities"] == 1 and reply.json["ontology"]["mapped_relations"] == 1
    assert _stored(db)[0] == {"Acme": "organization", "Alice": "person", "Paris": "place"}
    assert "- works_for (person -> organization)" in prompt_of(fake_anthropic.messages[0])


def test_an_asynchronous_remember_is_conformed_by_the_worker(api, db, models, local_jobs):
    fake_anthropic, _ = models
    register(api, dataset="main")
    fake_anthropic.queue(OUTSIDE)

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT, "async": True})

    assert reply.status == 202
    assert local_jobs.wait_until_empty(30)
    assert _stored(db) == (
        {"Acme": "organization", "Alice": "person", "Paris": "place"},
        [("Alice", "lives_in", "Paris"), ("Alice", "works_for", "Acme")],
    )


def test_a_batch_remembered_in_windows_is_conformed_as_a_text_alone(api, db, models, local_jobs):
    fake_anthropic, _ = models
    register(api, dataset="main")
    fake_anthropic.queue(OUTSIDE)
    fake_anthropic.queue(OUTSIDE)
    texts = [
        {"text": TEXT, "reference_time": "2026-01-01T00:00:00Z"},
        {"text": TEXT + " Still.", "reference_time": "2026-01-02T00:00:00Z"},
    ]

    reply = api.post("/v1/gb/remember/batch", {"user_id": "u1", "dataset": "main", "texts": texts})

    assert reply.status == 202, reply.json
    assert local_jobs.wait_until_empty(30)
    entities, edges = _stored(db)
    assert entities == {"Acme": "organization", "Alice": "person", "Paris": "place"}
    assert {e for e in edges} == {("Alice", "lives_in", "Paris"), ("Alice", "works_for", "Acme")}
    assert len([m for m in fake_anthropic.messages if "<ontology>" in prompt_of(m)]) == 2  # both texts told
