"""The small ontology of the ontology tests (people, organizations, places; worksFor and livesIn),
as OWL RDF/XML (tests/ontologies/people.owl) and as the JSON form."""

from __future__ import annotations

from pathlib import Path

PEOPLE_OWL = (Path(__file__).resolve().parent / "ontologies" / "people.owl").read_text()

PEOPLE_JSON = {
    "entity_types": [
        {"name": "Person", "description": "a human being"},
        {"name": "Organization", "description": "a company, institution or association"},
        {"name": "Place", "description": "a city, country or address"},
    ],
    "relation_types": [
        {
            "name": "worksFor",
            "description": "the person is employed by the organization",
            "domain": ["Person"],
            "range": ["Organization"],
        },
        {
            "name": "livesIn",
            "description": "the person's home is in the place",
            "domain": ["Person"],
            "range": ["Place"],
        },
    ],
}


def register(api, name: str = "people", user_id: str = "u1", **fields) -> dict:
    """POST /v1/gb/ontologies (the OWL form unless the fields give another); the 201 body."""
    json_form = "entity_types" in fields or "content" in fields
    body = {"user_id": user_id, "name": name, **({} if json_form else {"content": PEOPLE_OWL}), **fields}
    reply = api.post("/v1/gb/ontologies", body)
    assert reply.status == 201, reply.json
    return reply.json
