"""The pure parts of geo in query: the detect_geo reply, the nearby lines of the prompt, the radius
of a request, and which entity types are places."""

from __future__ import annotations

from datetime import UTC, datetime

from gligabao.ai.prompts.detect_geo import MAX_PLACES, DetectedPlaces
from gligabao.ai.prompts.query import QUERY_SYSTEM, query_prompt
from gligabao.api.query_models import QueryRequest
from gligabao.memory.geo import is_place, locate_places
from gligabao.memory.retrieval import Context
from gligabao.model import GeoAnchor, Nearby, NearbyEntity, Place, StoredEntity

NOW = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)
PARIS = GeoAnchor(3, "Paris", 48.8566, 2.3522, "city")


def test_the_detect_geo_reply_is_read_tolerantly():
    assert DetectedPlaces.model_validate({"places": ["Paris", " Lyon ", "", 3, "Paris"]}).places == [
        "Paris",
        "Lyon",
    ]
    assert DetectedPlaces.model_validate({"places": None}).places == []
    assert DetectedPlaces.model_validate({"places": "Paris"}).places == ["Paris"]
    many = [f"Town {i}" for i in range(30)]
    assert len(DetectedPlaces.model_validate({"places": many}).places) == MAX_PLACES


def test_the_nearby_entities_are_rendered_with_their_distance_and_anchor():
    context = Context(dataset_id=1, entities=[StoredEntity(7, "London", "city", "")])
    context.nearby = Nearby(
        50.0, (PARIS,), (NearbyEntity(StoredEntity(7, "London", "city", ""), 51.5, -0.12, 343.556, PARIS),)
    )

    system, content = query_prompt(context, "What is near Paris?", NOW)

    assert (
        '<nearby radius_km="50" anchors="Paris(3)">\n[entity 7] London (city): 343.6 km from Paris(3)\n</nearby>'
        in (content)
    )
    assert content.index("</graph>") < content.index("<nearby") < content.index("<current_time>")
    assert system.startswith(QUERY_SYSTEM) and "<nearby>" in system


def test_without_a_nearby_search_the_prompt_is_the_seeds():
    context = Context(dataset_id=1, entities=[StoredEntity(7, "London", "city", "")])

    system, content = query_prompt(context, "What is near Paris?", NOW)

    assert system == QUERY_SYSTEM and "<nearby" not in content


def test_an_anchor_with_nothing_near_says_so():
    context = Context(dataset_id=1)
    context.nearby = Nearby(50.0, (PARIS,), ())

    _, content = query_prompt(context, "What is near Paris?", NOW)

    assert "(no entity within 50 km of Paris(3))" in content


def test_the_anchors_and_nearby_entities_join_the_context_once():
    london = StoredEntity(7, "London", "city", "")
    context = Context(dataset_id=1, entities=[london])
    context.nearby = Nearby(400.0, (PARIS,), (NearbyEntity(london, 51.5, -0.12, 343.6, PARIS),))

    context.add_nearby()

    assert [e.id for e in context.entities] == [7, 3]


def test_a_nearby_search_has_the_requests_radius_or_the_servers():
    def radius(**fields):
        request = QueryRequest.model_validate({"user_id": "u1", "query": "near Paris?", **fields})
        return request.question(default_radius_km=50.0).nearby_radius_km

    assert radius() is None
    assert radius(geo_nearby=False) is None
    assert radius(geo_nearby=True) == 50.0
    assert radius(geo_radius_km=12.5) == 12.5
    assert radius(geo_nearby=True, geo_radius_km=20015) == 20015.0


def test_place_types_are_resolved_and_others_are_not():
    assert all(is_place(t) for t in ("city", "Country", " location ", "address", "region", "place"))
    assert not any(is_place(t) for t in ("person", "organization", "event", "unknown"))


class Entity:
    def __init__(self, name, type_):
        self.name, self.normalized_name, self.type = name, name.lower(), type_


class Resolver:
    def __init__(self):
        self.asked = []

    def resolve(self, names):
        self.asked.append(list(names))
        return {name: Place(name, 1.0, 2.0) for name in names if name != "Nowhere"}


def test_remember_asks_the_resolver_only_for_places_and_never_with_geo_off():
    resolver = Resolver()
    entities = [Entity("Alice", "person"), Entity("Paris", "city"), Entity("Nowhere", "place")]

    assert locate_places(resolver, entities) == {"paris": Place("Paris", 1.0, 2.0)}
    assert resolver.asked == [["Paris", "Nowhere"]]
    assert locate_places(None, entities) == {}
    assert locate_places(resolver, [Entity("Alice", "person")]) == {} and len(resolver.asked) == 1
