"""POST /v1/gb/query with geo on, over HTTP: `detect_geo`, the `nearby` object of a nearby search
(Paris to London about 344 km), and the 400s of the geo fields (seeds/query.md)."""

from __future__ import annotations

import pytest
from conftest import reconfigure
from fakes.anthropic_server import prompt_text, system_text
from query_helpers import Graph, ask

from gligabao.model import Place

PLACES = {
    "Paris": Place("Paris", 48.8566, 2.3522, "city", "FR"),
    "London": Place("London", 51.5074, -0.1278, "city", "GB"),
}


class DictResolver:
    def resolve(self, names):
        return {name: PLACES[name] for name in names if name in PLACES}


@pytest.fixture
def geo_on(db):
    reconfigure(geo=True, geo_radius_km=400, place_resolver=DictResolver())


@pytest.fixture
def providers(fake_anthropic, fake_openai):
    def respond(body):
        if "geographic places" in system_text(body):
            return {"places": ["Paris"] if "Paris" in prompt_text(body) else []}
        return {"answer": "London is 344 km from Paris.", "entities": [], "edges": []}

    fake_anthropic.responder = respond
    return fake_anthropic, fake_openai


def europe(db) -> dict[str, int]:
    graph = Graph(db)
    ids = {name: graph.entity(name, "city") for name in ("London", "Lyon")}
    ids["Alice"] = graph.entity("Alice", "person")
    db.execute(
        "UPDATE gb_entities SET latitude = 51.5074, longitude = -0.1278 WHERE id = %s", [ids["London"]]
    )
    db.execute("UPDATE gb_entities SET latitude = 45.764, longitude = 4.8357 WHERE id = %s", [ids["Lyon"]])
    return ids


def stages(db) -> list[str]:
    return [row[0] for row in db.execute("SELECT stage FROM gb_inferences ORDER BY id").fetchall()]


def test_a_nearby_search_answers_with_the_nearby_object(api, db, providers, geo_on):
    ids = europe(db)

    reply = ask(api, query="What is near Paris?", geo_nearby=True)

    assert reply.status == 200, reply.json
    nearby = reply.json["nearby"]
    paris_id = db.execute("SELECT id FROM gb_entities WHERE name = 'Paris'").fetchone()[0]
    assert nearby["radius_km"] == 400  # GB_GEO_RADIUS_KM of this server
    assert nearby["anchors"] == [{"id": paris_id, "name": "Paris", "latitude": 48.8566, "longitude": 2.3522}]
    london, lyon = nearby["nearby"]
    assert (london["id"], london["anchor"], london["anchor_id"]) == (ids["London"], "Paris", paris_id)
    assert london["distance_km"] == pytest.approx(343.6, abs=0.5)
    assert lyon["name"] == "Lyon" and 380 < lyon["distance_km"] < 400
    assert sorted(stages(db)) == ["detect_geo", "embed", "query"]


def test_geo_radius_km_overrides_the_default_radius(api, db, providers, geo_on):
    europe(db)

    reply = ask(api, query="What is near Paris?", geo_radius_km=350)

    assert reply.json["nearby"]["radius_km"] == 350
    assert [n["name"] for n in reply.json["nearby"]["nearby"]] == ["London"]


def test_without_geo_nearby_the_response_has_no_nearby_and_the_places_are_not_stored(
    api, db, providers, geo_on
):
    europe(db)

    reply = ask(api, query="What is near Paris?")

    assert reply.status == 200 and "nearby" not in reply.json
    assert db.execute("SELECT count(*) FROM gb_entities WHERE name = 'Paris'").fetchone()[0] == 0
    assert "detect_geo" in stages(db)


def test_nearby_is_omitted_when_the_question_has_no_place(api, db, providers, geo_on):
    europe(db)

    reply = ask(api, query="Who is Alice?", geo_nearby=True)

    assert reply.status == 200 and "nearby" not in reply.json


@pytest.mark.parametrize(
    "fields",
    [{"geo_radius_km": 0}, {"geo_radius_km": 20015.01}, {"geo_nearby": False, "geo_radius_km": 10}],
)
def test_geo_fields_out_of_their_rules_are_400_with_geo_on_and_change_nothing(
    api, db, providers, geo_on, fields
):
    europe(db)

    reply = ask(api, query="What is near Paris?", **fields)

    assert reply.status == 400 and "geo" in reply.json["error"]
    assert stages(db) == []
    assert db.execute("SELECT count(*) FROM gb_entities WHERE name = 'Paris'").fetchone()[0] == 0


def test_the_largest_radius_is_accepted(api, db, providers, geo_on):
    europe(db)

    reply = ask(api, query="What is near Paris?", geo_radius_km=20015)

    assert reply.status == 200
    assert [n["name"] for n in reply.json["nearby"]["nearby"]] == ["London", "Lyon"]
