"""Geo in the memory core (SPEC section 9), on the real PostgreSQL with in-process fakes: remember
gives place entities coordinates; query's `detect_geo` stage, and only with a nearby search the
stored places of the question and the entities within the radius, nearest first."""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime

import pytest

from gligabao.bootstrap import Bundle
from gligabao.db import geo as geo_rows
from gligabao.geo.distance import bounding_box, haversine_km
from gligabao.memory import query
from gligabao.memory.remember import TextToRemember, remember_text
from gligabao.model import Place
from gligabao.observability.inferences import Inference
from gligabao.settings import Settings

NOW = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)

PLACES = {
    "Paris": Place("Paris", 48.8566, 2.3522, "city", "FR"),
    "Versailles": Place("Versailles", 48.8049, 2.1204, "city", "FR"),
    "London": Place("London", 51.5074, -0.1278, "city", "GB"),
    "Lyon": Place("Lyon", 45.764, 4.8357, "city", "FR"),
    "Suva": Place("Suva", -18.1416, 178.4419, "city", "FJ"),
    "Taveuni": Place("Taveuni", -16.85, -179.95, "island", "FJ"),
}


class DictResolver:
    def __init__(self, places: dict[str, Place]):
        self.places, self.asked = places, []

    def resolve(self, names):
        names = list(names)
        self.asked.append(names)
        return {name: self.places[name] for name in names if name in self.places}


class ScriptedLLM:
    def __init__(self, replies: dict[str, dict]):
        self.replies, self.stages, self.prompts = replies, [], {}

    def complete(self, call, stage, *, reply_model, content, **options):
        self.stages.append(stage)
        self.prompts[stage] = content
        call.record(Inference(stage, "scripted", "none", 1, 1, None, 0.0, 0, True))
        return reply_model.model_validate(self.replies[stage])


class HashEmbedder:
    """A vector per text from its hash: different texts are far apart (no similarity seed)."""

    def embed(self, call, texts, stage="embed", *, deadline=None):
        call.record(Inference(stage, "hash", None, len(texts), 0, None, 0.0, 0, True))
        return [self._vector(text) for text in texts]

    @staticmethod
    def _vector(text: str) -> list[float]:
        seed = hashlib.sha256(text.encode()).digest()
        raw = [seed[i % len(seed)] - 127.5 + i % 7 for i in range(1536)]
        norm = math.sqrt(sum(x * x for x in raw))
        return [x / norm for x in raw]


def place(name: str) -> dict:
    return {"name": name, "type": "city", "description": ""}


EXTRACTION = {
    "entities": [
        {"name": "Alice", "type": "person", "description": "engineer"},
        place("Paris"),
        place("Versailles"),
        place("London"),
        place("Lyon"),
        {"name": "Xyzzyville", "type": "place", "description": "a town nobody knows"},
    ],
    "edges": [
        {
            "source": "Alice",
            "target": "Paris",
            "relation": "lives_in",
            "description": "Alice lives in Paris.",
        },
    ],
}


def bundle(database_url, test_database, llm, *, geo=True, resolver=None) -> Bundle:
    return Bundle(
        Settings(database_url=database_url, geo=geo),
        database=test_database,
        llm=llm,
        embedder=HashEmbedder(),
        clock=lambda: NOW,
        geo=resolver or DictResolver(PLACES),
    )


def coordinates(db) -> dict[str, tuple[float | None, float | None]]:
    rows = db.execute("SELECT name, latitude, longitude FROM gb_entities ORDER BY id").fetchall()
    return {name: (lat, lon) for name, lat, lon in rows}


def remember(memory, text="Alice lives in Paris.") -> None:
    remember_text(memory, TextToRemember(user_id="u1", dataset="main", text=text))


def test_remember_gives_place_entities_the_resolvers_coordinates(database_url, test_database, db):
    memory = bundle(database_url, test_database, ScriptedLLM({"extract": EXTRACTION}))

    remembered = remember_text(
        memory, TextToRemember(user_id="u1", dataset="main", text="Alice lives in Paris.")
    )

    stored = coordinates(db)
    assert stored["Paris"] == (48.8566, 2.3522)
    assert stored["Alice"] == (None, None)  # a person is not resolved
    assert stored["Xyzzyville"] == (None, None)  # a place the resolver does not know stays without
    assert memory.geo.asked == [["Paris", "Versailles", "London", "Lyon", "Xyzzyville"]]
    shown = {e.name: (e.latitude, e.longitude) for e in remembered.entities}
    assert shown["Paris"] == (48.8566, 2.3522) and shown["Alice"] == (None, None)


def test_remember_with_geo_off_resolves_nothing(database_url, test_database, db):
    memory = bundle(database_url, test_database, ScriptedLLM({"extract": EXTRACTION}), geo=False)

    remember(memory)

    assert set(coordinates(db).values()) == {(None, None)}
    assert memory.geo is None


def test_remember_with_the_local_gazetteer_places_paris(database_url, test_database, db):
    from gligabao.geo.gazetteer import local_gazetteer

    memory = bundle(
        database_url, test_database, ScriptedLLM({"extract": EXTRACTION}), resolver=local_gazetteer()
    )

    remember(memory)

    latitude, longitude = coordinates(db)["Paris"]
    assert haversine_km(latitude, longitude, 48.8566, 2.3522) < 5
    assert coordinates(db)["Xyzzyville"] == (None, None)


QUERY = {"answer": "Versailles is near Paris.", "entities": [2, 3], "edges": []}


def ask(memory, text="What is near Paris?", **options):
    return query.answer(memory, query.Question(user_id="u1", query=text, **options))


def test_with_geo_on_detect_geo_runs_but_without_a_nearby_search_nothing_is_stored(
    database_url, test_database, db
):
    llm = ScriptedLLM({"extract": EXTRACTION, "detect_geo": {"places": ["Paris", "Berlin"]}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory)
    before = db.execute("SELECT count(*) FROM gb_entities").fetchone()[0]

    answer = ask(memory)

    assert llm.stages == ["extract", "detect_geo", "query"]
    assert answer.nearby is None and "<nearby" not in llm.prompts["query"]
    assert db.execute("SELECT count(*) FROM gb_entities").fetchone()[0] == before
    stages = [row[0] for row in db.execute("SELECT stage FROM gb_inferences WHERE type = 'query'").fetchall()]
    assert sorted(stages) == ["detect_geo", "embed", "query"]


def test_with_geo_off_there_is_no_detect_geo_call(database_url, test_database, db):
    llm = ScriptedLLM({"extract": EXTRACTION, "query": QUERY})
    memory = bundle(database_url, test_database, llm, geo=False)
    remember(memory)

    assert ask(memory).nearby is None
    assert llm.stages == ["extract", "query"]


def test_a_nearby_search_finds_the_entities_within_the_radius_nearest_first(database_url, test_database, db):
    llm = ScriptedLLM({"extract": EXTRACTION, "detect_geo": {"places": ["Paris"]}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory)

    answer = ask(memory, nearby_radius_km=400)

    nearby = answer.nearby
    assert nearby.radius_km == 400
    assert [a.name for a in nearby.anchors] == ["Paris"]
    found = [(n.entity.name, n.anchor.name) for n in nearby.entities]
    assert found == [("Versailles", "Paris"), ("London", "Paris"), ("Lyon", "Paris")]
    distances = [n.distance_km for n in nearby.entities]
    assert distances == sorted(distances)
    assert distances[1] == pytest.approx(343.6, abs=0.5)  # Paris to London
    assert distances[2] == pytest.approx(haversine_km(48.8566, 2.3522, 45.764, 4.8357))
    assert '<nearby radius_km="400"' in llm.prompts["query"]
    assert "London (city): 343.6 km from Paris(" in llm.prompts["query"]


def test_the_radius_bounds_the_search(database_url, test_database, db):
    llm = ScriptedLLM({"extract": EXTRACTION, "detect_geo": {"places": ["Paris"]}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory)

    assert [n.entity.name for n in ask(memory, nearby_radius_km=50).nearby.entities] == ["Versailles"]
    assert [n.entity.name for n in ask(memory, nearby_radius_km=343).nearby.entities] == ["Versailles"]
    assert [n.entity.name for n in ask(memory, nearby_radius_km=345).nearby.entities] == [
        "Versailles",
        "London",
    ]


def test_the_resolved_places_of_the_question_are_stored_with_coordinates(database_url, test_database, db):
    llm = ScriptedLLM({"extract": EXTRACTION, "detect_geo": {"places": ["Suva", "Xyzzy"]}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory)

    answer = ask(memory, "Who is near Suva?", nearby_radius_km=50)

    assert coordinates(db)["Suva"] == (-18.1416, 178.4419)
    assert "Xyzzy" not in coordinates(db)  # not resolved, not stored
    assert [a.name for a in answer.nearby.anchors] == ["Suva"] and answer.nearby.entities == ()


def test_a_radius_across_the_date_line_finds_the_other_side(database_url, test_database, db):
    extraction = {
        "entities": [place("Suva"), {"name": "Taveuni", "type": "island", "description": ""}],
        "edges": [],
    }
    llm = ScriptedLLM({"extract": extraction, "detect_geo": {"places": ["Suva"]}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory, "Suva and Taveuni.")

    answer = ask(memory, "What is near Suva?", nearby_radius_km=300)

    assert [(n.entity.name, n.anchor.name) for n in answer.nearby.entities] == [("Taveuni", "Suva")]
    assert answer.nearby.entities[0].distance_km == pytest.approx(
        haversine_km(-18.1416, 178.4419, -16.85, -179.95)
    )
    assert answer.nearby.entities[0].distance_km < 300


def test_matched_place_entities_anchor_the_search_too(database_url, test_database, db):
    llm = ScriptedLLM({"extract": EXTRACTION, "detect_geo": {"places": []}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory)

    answer = ask(memory, "What is near Lyon?", nearby_radius_km=50)  # the keyword seed Lyon is a place

    assert "Lyon" in [a.name for a in answer.nearby.anchors]


def test_a_question_without_a_place_has_no_nearby(database_url, test_database, db):
    extraction = {"entities": [{"name": "Alice", "type": "person", "description": ""}], "edges": []}
    llm = ScriptedLLM({"extract": extraction, "detect_geo": {"places": []}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory, "Alice.")

    assert ask(memory, "Who is Alice?", nearby_radius_km=50).nearby is None


def test_the_radius_search_reads_the_coordinates_index(database_url, test_database, db):
    """The bounding box is a range of the (dataset_id, latitude, longitude) index, as the service
    role (row-level security): the cost follows the entities near the place, not the dataset."""
    llm = ScriptedLLM({"extract": EXTRACTION})
    memory = bundle(database_url, test_database, llm)
    remember(memory)
    dataset_id = db.execute("SELECT id FROM gb_datasets").fetchone()[0]
    paris_id = db.execute("SELECT id FROM gb_entities WHERE name = 'Paris'").fetchone()[0]

    with test_database.transaction("u1", "main") as uow:
        uow.conn.execute("SET LOCAL enable_seqscan = off")
        statement = []
        original = uow.conn.execute

        def explain(sql, params=None):
            statement.append(original("EXPLAIN " + sql, params).fetchall())
            return original(sql, params)

        uow.conn.execute = explain
        try:
            rows = geo_rows.nearby(
                uow.conn, dataset_id, [(paris_id, bounding_box(48.8566, 2.3522, 50))], 50, 25
            )
        finally:
            del uow.conn.execute
    plan = "\n".join(str(row) for row in statement[0])
    assert "gb_entities_coordinates" in plan
    assert [row["name"] for row in rows] == ["Versailles"]


@pytest.mark.parametrize("operation", ["remember", "query"])
def test_aws_location_without_a_place_index_is_503_before_any_model_call(
    database_url, test_database, db, operation
):
    from gligabao.errors import NotConfigured

    llm = ScriptedLLM({"extract": EXTRACTION, "detect_geo": {"places": []}, "query": QUERY})
    memory = Bundle(
        Settings(database_url=database_url, geo=True, geo_resolver="aws-location"),
        database=test_database,
        llm=llm,
        embedder=HashEmbedder(),
        clock=lambda: NOW,
    )
    db.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('u1', 'main')")

    with pytest.raises(NotConfigured):
        remember(memory) if operation == "remember" else ask(memory)

    assert llm.stages == []


def test_the_live_edges_around_the_nearby_entities_join_the_context(database_url, test_database, db):
    extraction = {
        "entities": [
            place("Paris"),
            place("Versailles"),
            {"name": "Bob", "type": "person", "description": ""},
        ],
        "edges": [
            {
                "source": "Bob",
                "target": "Versailles",
                "relation": "lives_in",
                "description": "Bob lives in Versailles.",
            }
        ],
    }
    llm = ScriptedLLM({"extract": extraction, "detect_geo": {"places": ["Paris"]}, "query": QUERY})
    memory = bundle(database_url, test_database, llm)
    remember(memory, "Bob lives in Versailles.")
    edge_id, bob_id = db.execute(
        "SELECT g.id, g.source_id FROM gb_edges AS g JOIN gb_entities AS e ON e.id = g.source_id WHERE e.name = 'Bob'"
    ).fetchone()
    cited = {"answer": "Bob lives near Paris.", "entities": [bob_id], "edges": [edge_id]}
    llm.replies["query"] = cited

    answer = ask(memory, "Who lives near Paris?", nearby_radius_km=50)

    prompt = llm.prompts["query"]
    assert f"[edge {edge_id}] Bob({bob_id}) --lives_in--> Versailles(" in prompt
    assert f"[entity {bob_id}] Bob (person)" in prompt
    assert [e.id for e in answer.evidence.edges] == [edge_id]
    db.execute("UPDATE gb_edges SET expired_at = now() WHERE id = %s", [edge_id])
    ask(memory, "Who lives near Paris?", nearby_radius_km=50)
    assert f"[edge {edge_id}]" not in llm.prompts["query"]  # a superseded fact is never retrieved
