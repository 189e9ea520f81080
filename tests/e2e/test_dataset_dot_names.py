"""A dataset named "." or "..", over HTTP: a 400 naming why, in a body or a query string, that
stores nothing (no path could reach such a dataset afterwards: /v1/gb/datasets/../graph is
resolved away by clients and gateways)."""

from __future__ import annotations

import pytest
from conftest import count_rows
from graph_rows import nothing_stored
from ontology_helpers import PEOPLE_OWL


@pytest.mark.parametrize("name", [".", ".."])
def test_a_dot_dataset_is_a_400_that_stores_nothing(api, db, models, name):
    fake_anthropic, fake_openai = models
    refused = [
        api.post("/v1/gb/remember", {"user_id": "u1", "dataset": name, "text": "Alice works at Acme."}),
        api.post("/v1/gb/query", {"user_id": "u1", "dataset": name, "query": "Where does Alice work?"}),
        api.post("/v1/gb/search", {"user_id": "u1", "dataset": name, "query": "Alice"}),
        api.post(
            "/v1/gb/ontologies", {"user_id": "u1", "name": "people", "content": PEOPLE_OWL, "dataset": name}
        ),
        api.get(f"/v1/gb/edges?user_id=u1&dataset={name}"),
        api.get(f"/v1/gb/graph?user_id=u1&dataset={name}"),
    ]

    for reply in refused:
        assert reply.status == 400, reply.json
        assert reply.json["error"].startswith(f"dataset must not be '{name}'"), reply.json
    assert nothing_stored(db) and count_rows(db, "gb_ontologies") == 0
    assert fake_anthropic.messages == [] and fake_openai.requests == []


def test_names_with_dots_that_are_no_path_segments_stay_reachable(api, db, models):
    for name in ("...", ".notes", "v1.2"):
        remembered = api.post(
            "/v1/gb/remember", {"user_id": "u1", "dataset": name, "text": "Alice works at Acme."}
        )
        assert remembered.status == 200, remembered.json

        graph = api.get(f"/v1/gb/datasets/{name}/graph?user_id=u1")

        assert graph.status == 200, graph.json
        assert {e["name"] for e in graph.json["entities"]} >= {"Alice", "Acme"}


@pytest.mark.parametrize("name", [".", ".."])
def test_a_dot_ontology_name_is_a_400_that_stores_nothing(api, db, name):
    refused = [
        api.post("/v1/gb/ontologies", {"user_id": "u1", "name": name, "content": PEOPLE_OWL}),
        api.request("PUT", "/v1/gb/datasets/main/ontology", {"user_id": "u1", "ontology": name}),
    ]

    for reply in refused:
        assert reply.status == 400, reply.json
        assert f"must not be '{name}': no path could name it" in reply.json["error"], reply.json
    assert count_rows(db, "gb_ontologies") == 0 and count_rows(db, "gb_datasets") == 0
