"""POST /v1/gb/search at equal scores ("the first hour"): an entity kept as an end of a fact has
its fact's score, so an entity reached only through Acme ties Acme whenever the fact outscores
Acme's own match ("Who works at Acme?": the fact holds "works", Acme's name does not). The direct
match ranks first, then the entities reached through it, by id."""

from __future__ import annotations

from remember_helpers import remember


def search(api, query: str) -> dict:
    reply = api.post("/v1/gb/search", {"user_id": "u1", "query": query})
    assert reply.status == 200, reply.json
    return reply.json


def test_the_entity_the_query_names_ranks_above_the_entities_reached_only_through_it_at_equal_scores(
    api, models
):
    remember(api, "Alice works at Acme.")
    remember(api, "Bob works at Acme. Bob lives in Paris.")

    entities = search(api, "Who works at Acme?")["entities"]

    by_name = {entity["name"]: entity for entity in entities}
    assert by_name["Acme"]["reasons"] == ["keyword"]
    assert by_name["Alice"]["reasons"] == by_name["Bob"]["reasons"] == ["expansion"]
    assert by_name["Alice"]["score"] == by_name["Acme"]["score"]  # the tie this is about
    assert [entity["name"] for entity in entities][:3] == ["Acme", "Alice", "Bob"]  # Alice's id first


def test_equal_scores_break_by_directness_then_id_in_every_list(api, models):
    remember(api, "Alice works at Acme.")
    remember(api, "Bob works at Acme. Bob lives in Paris.")

    for query in ("Acme", "Who works at Acme?", "Where does Bob live?"):
        body = search(api, query)
        for kind in ("entities", "edges"):
            order = [(-item["score"], item["reasons"] == ["expansion"], item["id"]) for item in body[kind]]
            assert order == sorted(order), (query, kind, body[kind])
