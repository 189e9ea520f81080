"""The evidence of an answer: the cited ids validated against the context that was sent
(seeds/query.md, step 4)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gligabao.ai.prompts.query import QueryReply
from gligabao.memory.retrieval import Context
from gligabao.model import Passage, StoredEdge, StoredEntity


@dataclass(frozen=True)
class Evidence:
    """What the answer relied on, each list ordered by id; edges carry their endpoints' names."""

    entities: list[StoredEntity] = field(default_factory=list)
    edges: list[StoredEdge] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)


def build_evidence(reply: QueryReply, context: Context) -> Evidence:
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

    return Evidence(
        entities=[entities[entity_id] for entity_id in sorted(cited_entities)],
        edges=[_with_names(edges[edge_id], entities) for edge_id in cited_edges],
        passages=[passages[artifact_id] for artifact_id in cited_passages],
    )


def _with_names(edge: StoredEdge, entities: dict[int, StoredEntity]) -> StoredEdge:
    return replace(edge, source=_name(entities, edge.source_id), target=_name(entities, edge.target_id))


def _name(entities: dict[int, StoredEntity], entity_id: int) -> str:
    entity = entities.get(entity_id)
    return entity.name if entity else ""
