"""The ontology routes over HTTP: register from OWL RDF/XML or the JSON form, read back, replace,
delete, attach to a dataset and detach; two users; hostile bodies."""

from __future__ import annotations

from conftest import count_rows
from ontology_helpers import PEOPLE_JSON, PEOPLE_OWL, register

PEOPLE_TYPES = ["organization", "person", "place"]


def test_an_owl_ontology_is_registered_and_read_back_with_its_types_and_relations(api, db):
    created = register(api, description="people at work")

    assert created["name"] == "people"
    assert created["format"] == "owl"
    assert created["out_of_ontology"] == "map"
    assert created["counts"] == {"entity_types": 3, "relation_types": 2}
    assert created["datasets"] == []
    assert created["content"] == PEOPLE_OWL
    assert created["size_bytes"] == len(PEOPLE_OWL.encode())
    read = api.get("/v1/gb/ontologies/people?user_id=u1")
    assert read.status == 200
    assert read.json == created
    assert [t["type"] for t in read.json["entity_types"]] == PEOPLE_TYPES
    works_for = next(r for r in read.json["relation_types"] if r["name"] == "worksFor")
    assert works_for == {
        "name": "worksFor",
        "relation": "works_for",
        "description": "the person is employed by the organization",
        "domain": ["person"],
        "range": ["organization"],
        "aliases": [],
        "parents": [],
    }


def test_the_json_form_gives_the_same_types_as_the_owl_document(api, db):
    owl = register(api, "owl")
    json_form = register(api, "json", **PEOPLE_JSON, out_of_ontology="drop")

    assert json_form["format"] == "json"
    assert json_form["out_of_ontology"] == "drop"
    assert "content" not in json_form
    assert sorted(json_form["entity_types"], key=lambda t: t["type"]) == owl["entity_types"]
    assert sorted(json_form["relation_types"], key=lambda r: r["relation"]) == owl["relation_types"]


def test_ontologies_are_listed_by_name_without_their_types(api, db):
    register(api, "b")
    register(api, "a", **PEOPLE_JSON)

    listed = api.get("/v1/gb/ontologies?user_id=u1").json["ontologies"]

    assert [o["name"] for o in listed] == ["a", "b"]
    assert "entity_types" not in listed[0] and "content" not in listed[1]


def test_registering_a_name_twice_is_409_and_keeps_the_first(api, db):
    register(api)

    again = api.post("/v1/gb/ontologies", {"user_id": "u1", "name": "people", **PEOPLE_JSON})

    assert again.status == 409
    assert "exists already" in again.json["error"]
    assert api.get("/v1/gb/ontologies/people?user_id=u1").json["format"] == "owl"


def test_put_replaces_the_document_and_keeps_the_datasets(api, db):
    register(api, dataset="main")
    smaller = {**PEOPLE_JSON, "relation_types": PEOPLE_JSON["relation_types"][:1]}

    reply = api.request(
        "PUT", "/v1/gb/ontologies/people", {"user_id": "u1", **smaller, "out_of_ontology": "drop"}
    )

    assert reply.status == 200, reply.json
    assert reply.json["counts"] == {"entity_types": 3, "relation_types": 1}
    assert reply.json["out_of_ontology"] == "drop"
    assert reply.json["datasets"] == ["main"]
    assert reply.json["updated_at"] >= reply.json["created_at"]
    missing = api.request("PUT", "/v1/gb/ontologies/nope", {"user_id": "u1", **smaller})
    assert missing.status == 404


def test_attach_detach_and_the_datasets_ontology(api, db):
    register(api)

    attached = api.request("PUT", "/v1/gb/datasets/notes/ontology", {"user_id": "u1", "ontology": "people"})

    assert attached.status == 200
    assert attached.json == {"dataset": "notes", "ontology": "people"}
    [listed] = api.get("/v1/gb/datasets?user_id=u1").json["datasets"]
    assert (listed["name"], listed["ontology"]) == ("notes", "people")
    assert api.get("/v1/gb/datasets/notes/ontology?user_id=u1").json["name"] == "people"
    assert api.get("/v1/gb/ontologies/people?user_id=u1").json["datasets"] == ["notes"]
    assert api.delete("/v1/gb/datasets/notes/ontology?user_id=u1").status == 204
    assert api.get("/v1/gb/datasets/notes/ontology?user_id=u1").status == 404
    assert api.get("/v1/gb/datasets?user_id=u1").json["datasets"][0]["ontology"] is None
    assert api.delete("/v1/gb/datasets/notes/ontology?user_id=u1").status == 204  # none: nothing to do
    assert api.delete("/v1/gb/datasets/other/ontology?user_id=u1").status == 404
    unknown = api.request("PUT", "/v1/gb/datasets/x/ontology", {"user_id": "u1", "ontology": "nope"})
    assert unknown.status == 404
    assert count_rows(db, "gb_datasets") == 1  # the 404 created no dataset


def test_an_attached_ontology_cannot_be_deleted_and_a_deleted_dataset_detaches(api, db):
    register(api, dataset="main")

    refused = api.delete("/v1/gb/ontologies/people?user_id=u1")

    assert refused.status == 409
    assert "main" in refused.json["error"]
    assert api.delete("/v1/gb/datasets/main?user_id=u1").status == 204
    assert api.get("/v1/gb/ontologies/people?user_id=u1").json["datasets"] == []
    assert api.delete("/v1/gb/ontologies/people?user_id=u1").status == 204
    assert api.get("/v1/gb/ontologies/people?user_id=u1").status == 404
    assert count_rows(db, "gb_ontologies") == 0


def test_another_users_ontology_is_invisible_and_cannot_be_attached(api, db):
    register(api, user_id="u2")

    assert api.get("/v1/gb/ontologies?user_id=u1").json == {"ontologies": []}
    assert api.get("/v1/gb/ontologies/people?user_id=u1").status == 404
    assert api.delete("/v1/gb/ontologies/people?user_id=u1").status == 404
    assert api.request("PUT", "/v1/gb/ontologies/people", {"user_id": "u1", **PEOPLE_JSON}).status == 404
    assert (
        api.request("PUT", "/v1/gb/datasets/main/ontology", {"user_id": "u1", "ontology": "people"}).status
        == 404
    )
    register(api, user_id="u1", **PEOPLE_JSON)  # the same name is free for u1
    assert api.get("/v1/gb/ontologies/people?user_id=u2").json["format"] == "owl"
    assert count_rows(db, "gb_ontologies") == 2


def test_post_with_an_idempotency_key_runs_once(api, db):
    body = {"user_id": "u1", "name": "people", "content": PEOPLE_OWL}
    headers = {"Idempotency-Key": "onto-1"}

    first = api.post("/v1/gb/ontologies", body, headers=headers)
    again = api.post("/v1/gb/ontologies", body, headers=headers)
    other = api.post("/v1/gb/ontologies", {**body, "name": "other"}, headers=headers)

    assert first.status == again.status == 201
    assert again.json == first.json
    assert {k.lower(): v for k, v in again.headers.items()}["idempotent-replayed"] == "true"
    assert other.status == 409
    assert count_rows(db, "gb_ontologies") == 1


def _refused(api, db, body: dict, status: int = 400) -> str:
    reply = api.post("/v1/gb/ontologies", {"user_id": "u1", "name": "bad", **body})
    assert reply.status == status, reply.json
    assert count_rows(db, "gb_ontologies") == 0
    return reply.json["error"]


def test_a_document_that_is_not_xml_or_not_owl_is_400(api, db):
    assert "not well-formed XML" in _refused(api, db, {"content": "<rdf:RDF"})
    assert "not well-formed XML" in _refused(api, db, {"content": "not xml at all"})
    no_class = '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>'
    assert "no owl:Class" in _refused(api, db, {"content": no_class})


def test_billion_laughs_is_400_before_any_expansion(api, db):
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + "".join(
            f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">' for i in range(1, 10)
        )
        + ']><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">&lol9;</rdf:RDF>'
    )
    assert "nested entities are not allowed" in _refused(api, db, {"content": laughs})
    wide = (
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY big "' + "x" * 1000 + '">]>'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><a>'
        + "&big;" * 5000
        + "</a></rdf:RDF>"
    )
    assert "expand to too much text" in _refused(api, db, {"content": wide})


def test_external_entities_and_dtds_are_400_and_never_fetched(api, db, fake_openai):
    target = f"{fake_openai.url}/secret"
    external = (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY ext SYSTEM "{target}">]>'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">&ext;</rdf:RDF>'
    )
    assert "external entity" in _refused(api, db, {"content": external})
    dtd = f'<?xml version="1.0"?><!DOCTYPE r SYSTEM "{target}"><r/>'
    assert "external DTD" in _refused(api, db, {"content": dtd})
    local_file = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY f SYSTEM "file:///etc/passwd">]><r>&f;</r>'
    assert "external entity" in _refused(api, db, {"content": local_file})
    parameter = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p "x">]><r/>'
    assert "parameter entity" in _refused(api, db, {"content": parameter})
    assert fake_openai.requests == []


def test_a_huge_document_is_413(api, db):
    huge = PEOPLE_OWL.replace("</rdf:RDF>", "<!--" + "x" * 600_000 + "--></rdf:RDF>")
    assert "larger than 524288 bytes" in _refused(api, db, {"content": huge}, status=413)


def test_bad_bodies_are_400_naming_what_is_wrong(api, db):
    assert "colour" in _refused(api, db, {"content": PEOPLE_OWL, "colour": "red"})
    assert "exactly one of content" in _refused(api, db, {})
    assert "exactly one of content" in _refused(api, db, {"content": PEOPLE_OWL, **PEOPLE_JSON})
    assert "relation_types needs entity_types" in _refused(api, db, {"relation_types": []})
    assert "out_of_ontology" in _refused(api, db, {**PEOPLE_JSON, "out_of_ontology": "keep"})
    dangling = {
        "entity_types": [{"name": "Person"}],
        "relation_types": [{"name": "worksFor", "range": ["Org"]}],
    }
    assert "range 'org' is not declared" in _refused(api, db, dangling)
    twice = {"entity_types": [{"name": "Person"}, {"name": "person"}]}
    assert "the same name" in _refused(api, db, twice)
    assert "at least one entity type" in _refused(api, db, {"entity_types": []})
    assert "NUL" in _refused(api, db, {"entity_types": [{"name": "Per\u0000son"}]})
    assert "control characters" in _refused(api, db, {"entity_types": [{"name": "Per\u0001son"}]})
    assert "control characters" in _refused(api, db, {**PEOPLE_JSON, "description": "a\u001bb"})
    assert "letter or a digit" in _refused(api, db, {"entity_types": [{"name": "!!"}]})
    assert "not OWL in RDF/XML" in _refused(
        api, db, {"content": PEOPLE_OWL.replace("a human being", "a&#0;b")}
    )
    reply = api.post("/v1/gb/ontologies", {"user_id": "u1", "name": "ba d", **PEOPLE_JSON})
    assert reply.status == 400 and "name" in reply.json["error"]
    reply = api.post("/v1/gb/ontologies", {"name": "x", **PEOPLE_JSON})
    assert reply.status == 400 and "user_id" in reply.json["error"]
    reply = api.request("PUT", "/v1/gb/datasets/main/ontology", {"user_id": "u1", "ontology": "p", "x": 1})
    assert reply.status == 400
    reply = api.request("POST", "/v1/gb/ontologies", raw=b"{not json")
    assert reply.status == 400


OWL_HEAD = (
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" xmlns:owl="http://www.w3.org/2002/07/owl#">'
)
CYCLIC_UNION = (
    OWL_HEAD
    + '<owl:Class rdf:about="http://x/Person"/>'
    + '<owl:ObjectProperty rdf:about="http://x/knows"><rdfs:domain><owl:Class>'
    + '<owl:unionOf rdf:nodeID="list"/></owl:Class></rdfs:domain></owl:ObjectProperty>'
    + '<rdf:Description rdf:nodeID="list"><rdf:first rdf:resource="http://x/Person"/>'
    + '<rdf:rest rdf:nodeID="list"/></rdf:Description></rdf:RDF>'
)


def _owl_class(local_name: str, inside: str = "") -> str:
    return OWL_HEAD + f'<owl:Class rdf:about="http://x/{local_name}">{inside}</owl:Class></rdf:RDF>'


def test_an_owl_list_whose_rest_is_itself_is_400_and_a_replace_with_it_changes_nothing(api, db):
    assert "rdf:rest loops back" in _refused(api, db, {"content": CYCLIC_UNION})
    stored = register(api)

    reply = api.request("PUT", "/v1/gb/ontologies/people", {"user_id": "u1", "content": CYCLIC_UNION})

    assert reply.status == 400 and "knows" in reply.json["error"], reply.json
    assert api.get("/v1/gb/ontologies/people?user_id=u1").json == stored


def test_the_owl_form_obeys_the_json_forms_limits_and_character_rules(api, db):
    labels = "".join(f"<rdfs:label>Label {i}</rdfs:label>" for i in range(300))
    refusals = {
        _owl_class("A" * 5000): "name: String should have at most 100 characters",
        _owl_class("Person", labels): "aliases: List should have at most 50 items",
        _owl_class("Per&#x9b;son"): "name: must not contain control characters",
        _owl_class("Person", "<rdfs:label>Hu&#x80;man</rdfs:label>"): "control characters",
        _owl_class(
            "Person", "<rdfs:label>Hu&#x85;man</rdfs:label>"
        ): "control characters",  # NEL, a space too
        _owl_class("Person", "<rdfs:comment>a&#x9b;b</rdfs:comment>"): "control characters",
        _owl_class("Person", f"<rdfs:comment>{'x' * 1001}</rdfs:comment>"): "at most 1000 characters",
        _owl_class("Person", "<rdfs:label>!!</rdfs:label>"): "letter or a digit",
        _owl_class("Person", f"<rdfs:label>{'y' * 101}</rdfs:label>"): "at most 100 characters",
    }
    for document, refusal in refusals.items():
        error = _refused(api, db, {"content": document})
        assert refusal in error and "http://x/" in error, error
        assert len(error) < 400  # the 5,000 characters are not echoed back
