"""The evidence of an answer: the cited ids validated against the context that was sent
(seeds/query.md, step 4)."""

from __future__ import annotations

from gligabao.ai.prompts.query import QueryReply
from gligabao.memory.retrieval import Context, ContextEdge, ContextEntity, Passage
from gligabao.timefmt import rfc3339


def empty_evidence() -> dict:
    return {"entities": [], "edges": [], "passages": []}


def build_evidence(reply: QueryReply, context: Context) -> dict:
    """Only ids that were in the context (hallucinated ones dropped), each once, ordered by id;
    the endpoints of every cited edge added to the entities; passages as they were given."""
    entities = {entity.id: entity for entity in context.entities}
    edges = {edge.id: edge for edge in context.edges}
    passages = {passage.artifact_id: passage for passage in context.passages}

    cited_edges = sorted({edge_id for edge_id in reply.edges if edge_id in edges})
    cited_entities = {entity_id for entity_id in reply.entities if entity_id in entities}
    for edge_id in cited_edges:
        cited_entities.update((edges[edge_id].source_id, edges[edge_id].target_id))
    cited_entities &= entities.keys()  # an endpoint is always in the context; never invent one
    cited_passages = sorted({artifact_id for artifact_id in reply.passages if artifact_id in passages})

    return {
        "entities": [entity_evidence(entities[entity_id]) for entity_id in sorted(cited_entities)],
        "edges": [edge_evidence(edges[edge_id], entities) for edge_id in cited_edges],
        "passages": [passage_evidence(passages[artifact_id]) for artifact_id in cited_passages],
    }


def entity_evidence(entity: ContextEntity) -> dict:
    item = {"id": entity.id, "name": entity.name, "type": entity.type}
    if entity.description:
        item["description"] = entity.description
    return item


def edge_evidence(edge: ContextEdge, entities: dict[int, ContextEntity]) -> dict:
    """The seed's response example: artifact_id omitted if unset; valid_at, invalid_at and
    expired_at omitted when null; created_at always there."""
    item: dict = {
        "id": edge.id,
        "source_id": edge.source_id,
        "target_id": edge.target_id,
        "source": _name(entities, edge.source_id),
        "target": _name(entities, edge.target_id),
        "relation": edge.relation,
    }
    if edge.description:
        item["description"] = edge.description
    if edge.artifact_id is not None:
        item["artifact_id"] = edge.artifact_id
    for name in ("valid_at", "invalid_at", "created_at", "expired_at"):
        moment = getattr(edge, name)
        if moment is not None:
            item[name] = rfc3339(moment)
    return item


def passage_evidence(passage: Passage) -> dict:
    item: dict = {"artifact_id": passage.artifact_id, "parent_id": passage.parent_id, "index": passage.index}
    if passage.summary is not None:
        item["summary"] = passage.summary
    if passage.text is not None:
        item["text"] = passage.text
    return item


def _name(entities: dict[int, ContextEntity], entity_id: int) -> str:
    entity = entities.get(entity_id)
    return entity.name if entity else ""
