"""Geo in the memory core (SPEC section 9): coordinates for the places remember stores, and the
nearby search of query. The resolver (ports.GeoResolver) is the bundle's; None while geo is off."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from gligabao.ai.prompts.detect_geo import DETECT_GEO_MAX_TOKENS, DetectedPlaces, detect_geo_prompt
from gligabao.ai.stages import level_for
from gligabao.db import geo as geo_rows
from gligabao.db import graph_reads
from gligabao.geo.distance import bounding_box
from gligabao.memory.names import normalized_name
from gligabao.memory.ports import LLM, GeoResolver, Memory
from gligabao.model import GeoAnchor, Nearby, NearbyEntity, Place, StoredEntity
from gligabao.observability.inferences import CallContext

# Entity types that name a place on a map (the extract stage's types, lowercased).
PLACE_TYPES = frozenset(
    """
    place location city town village country region state province county district municipality
    address street neighborhood neighbourhood landmark continent island capital territory area
    """.split()
)


def is_place(entity_type: str) -> bool:
    return entity_type.strip().lower() in PLACE_TYPES


def locate_places(geo: GeoResolver | None, entities: Iterable) -> dict[str, Place]:
    """The coordinates of the place-typed entities (with `name`, `normalized_name`, `type`) the
    resolver finds, by normalized name; {} while geo is off."""
    if geo is None:
        return {}
    wanted = {e.normalized_name: e.name for e in entities if is_place(e.type)}
    if not wanted:
        return {}
    found = geo.resolve(list(dict.fromkeys(wanted.values())))
    return {key: found[name] for key, name in wanted.items() if name in found}


def detect_places(
    llm: LLM, call: CallContext, question: str, reasoning: dict, models: dict, deadline
) -> list[str]:
    """Stage `detect_geo`: the names of the places the question mentions, as written."""
    system, content = detect_geo_prompt(question)
    reply = llm.complete(
        call,
        "detect_geo",
        system=system,
        content=content,
        reply_model=DetectedPlaces,
        reasoning=level_for(reasoning, "detect_geo"),
        model=models.get("detect_geo"),
        max_tokens=DETECT_GEO_MAX_TOKENS,
        deadline=deadline,
    )
    return reply.places


def search_nearby(
    memory: Memory,
    geo: GeoResolver,
    *,
    user_id: str,
    dataset: str,
    places: Sequence[str],
    matched_ids: Sequence[int],
    radius_km: float,
    as_of: datetime | None = None,
) -> tuple[Nearby | None, list[dict]]:
    """Resolve the question's places and store them as entities with coordinates; with the
    matched entities that have coordinates they are the anchors; the entities within
    `radius_km` of an anchor are found, and the edges around them (live, or valid `as_of`) with
    their other ends, as rows of the context statement. (None, []) when there is no anchor (the
    question has no place)."""
    resolved = geo.resolve(list(places)) if places else {}
    rows = {}
    for place in resolved.values():
        key = normalized_name(place.name)
        if key and key not in rows:
            rows[key] = geo_rows.PlaceRow(place.name, key, place.kind, place.latitude, place.longitude)
    with memory.database.transaction(user_id, dataset) as uow:
        if uow.dataset_id is None:
            return None, []
        anchor_rows = geo_rows.anchors(uow.conn, uow.dataset_id, list(rows.values()), matched_ids)
        if not anchor_rows:
            return None, []
        anchors = {
            row["id"]: GeoAnchor(
                row["id"], row["name"], row["latitude"], row["longitude"], row["type"], row["description"]
            )
            for row in anchor_rows
        }
        found = geo_rows.nearby(
            uow.conn,
            uow.dataset_id,
            [(a.id, bounding_box(a.latitude, a.longitude, radius_km)) for a in anchors.values()],
            radius_km,
            memory.limits.geo_nearby_entities,
        )
        around = graph_reads.around_entities_rows(
            uow.conn,
            dataset_id=uow.dataset_id,
            entity_ids=[row["id"] for row in found],
            limits=memory.limits,
            as_of=as_of,
        )
    nearby = Nearby(
        radius_km=radius_km,
        anchors=tuple(anchors.values()),
        entities=tuple(
            NearbyEntity(
                StoredEntity(row["id"], row["name"], row["type"], row["description"]),
                row["latitude"],
                row["longitude"],
                row["distance_km"],
                anchors[row["anchor_id"]],
            )
            for row in found
        ),
    )
    return nearby, around
