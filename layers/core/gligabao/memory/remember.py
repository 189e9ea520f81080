"""remember for texts (SPEC section 5): chunk -> extract -> embed -> resolve entities ->
resolve facts -> store, with at most 2 LLM calls and 1 embeddings request per unchunked text.

The request arrives validated (the HTTP layer's job). Model calls run outside any database
transaction; everything the call stores is written in one transaction at the end, so a failure
anywhere leaves nothing behind but the `gb_inferences` rows of the model calls made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gligabao.ai.embeddings import Embedder
from gligabao.ai.llm import LLM
from gligabao.db import datasets as dataset_rows
from gligabao.db import graph_writes
from gligabao.db.connection import user_transaction
from gligabao.memory import fact_resolution
from gligabao.memory.chunking import split_text
from gligabao.memory.entity_resolution import StoredEntity, resolve_entities
from gligabao.memory.extraction import TextGraph, extract, merge_extractions
from gligabao.memory.fact_resolution import FactsStored, Judgement
from gligabao.memory.operation import Operation, operation
from gligabao.observability.inferences import CallContext, save_inferences
from gligabao.timefmt import rfc3339, utcnow


@dataclass(frozen=True)
class TextToRemember:
    user_id: str
    dataset: str
    text: str
    session_id: str | None = None
    reference_time: datetime | None = None
    reasoning: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Vectors:
    """The vectors of one embeddings request, by what they are of."""

    entities: list[list[float]]
    facts: list[list[float]]
    chunks: list[list[float]]
    summaries: list[list[float] | None]


def remember_text(
    request: TextToRemember,
    *,
    request_id: str | None = None,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    deadline: float | None = None,
) -> dict:
    """Remember one text; returns the response body of SPEC section 5.

    `llm` and `embedder` default to the container's clients; both are obtained before any call,
    so a missing key (503) costs no model call. `deadline` is a `time.monotonic()` instant.
    """
    with operation(
        "remember",
        user_id=request.user_id,
        dataset=request.dataset,
        session_id=request.session_id,
        request_id=request_id,
    ) as op:
        llm, embedder = _clients(llm, embedder)
        now = utcnow()
        reference_time = request.reference_time or now
        chunks = split_text(request.text)
        pieces = chunks or [request.text]
        extractions = extract(
            llm,
            op.call,
            pieces,
            chunked=bool(chunks),
            reference_time=reference_time,
            now=now,
            reasoning=dict(request.reasoning),
            models=dict(request.models),
            deadline=deadline,
        )
        graph = merge_extractions(extractions, reference_time)
        vectors = embed(embedder, op.call, graph, chunks, deadline)
        judgement = judge_facts(llm, op.call, request, graph, vectors, reference_time, now, deadline)
        return store(op, request, graph, chunks, vectors, judgement, reference_time)


def _clients(llm: LLM | None, embedder: Embedder | None) -> tuple[LLM, Embedder]:
    from gligabao.ai import clients

    return llm or clients.llm(), embedder or clients.embedder()


def embed(
    embedder: Embedder, call: CallContext, graph: TextGraph, chunks: Sequence[str], deadline: float | None
) -> Vectors:
    """Every string of the call in one embeddings request (each distinct string once)."""
    entity_texts = [entity.embedding_text for entity in graph.entities]
    fact_texts = [fact.embedding_text for fact in graph.facts]
    summaries = graph.summaries or [None] * len(chunks)
    distinct = list(dict.fromkeys([*entity_texts, *fact_texts, *chunks, *(s for s in summaries if s)]))
    vector_of = (
        dict(zip(distinct, embedder.embed(call, distinct, deadline=deadline), strict=True))
        if distinct
        else {}
    )
    return Vectors(
        entities=[vector_of[text] for text in entity_texts],
        facts=[vector_of[text] for text in fact_texts],
        chunks=[vector_of[text] for text in chunks],
        summaries=[vector_of[s] if s else None for s in summaries],
    )


def judge_facts(
    llm: LLM,
    call: CallContext,
    request: TextToRemember,
    graph: TextGraph,
    vectors: Vectors,
    reference_time: datetime,
    now: datetime,
    deadline: float | None,
) -> Judgement:
    """Ask the resolve stage about the new facts, when the dataset holds edges to compare them with."""
    if not graph.facts:
        return Judgement()
    with user_transaction(request.user_id) as conn:
        dataset_id = dataset_rows.find_id(conn, request.user_id, request.dataset)
        if dataset_id is None:
            return Judgement()
        call.dataset_id = dataset_id
        candidates = fact_resolution.find_candidates(conn, dataset_id, graph, vectors.entities, vectors.facts)
    return fact_resolution.judge(
        llm,
        call,
        graph,
        candidates,
        reference_time=reference_time,
        now=now,
        reasoning=dict(request.reasoning),
        models=dict(request.models),
        deadline=deadline,
    )


def store(
    op: Operation,
    request: TextToRemember,
    graph: TextGraph,
    chunks: Sequence[str],
    vectors: Vectors,
    judgement: Judgement,
    reference_time: datetime,
) -> dict:
    """Write everything in one transaction, under the dataset's lock; the response body."""
    with user_transaction(request.user_id) as conn:
        now = utcnow()
        dataset_id = dataset_rows.lock_or_create(conn, request.user_id, request.dataset)
        op.call.dataset_id = dataset_id
        artifact_id, chunk_ids = graph_writes.insert_artifacts(
            conn,
            dataset_id,
            text=request.text,
            session_id=request.session_id,
            reference_time=reference_time,
            chunks=[
                graph_writes.ChunkRow(text, summary, vector, summary_vector)
                for text, summary, vector, summary_vector in zip(
                    chunks, graph.summaries, vectors.chunks, vectors.summaries, strict=True
                )
            ],
        )
        piece_artifacts = chunk_ids or [artifact_id]
        entities = resolve_entities(conn, dataset_id, graph.entities, vectors.entities)
        facts = fact_resolution.store_facts(
            conn, dataset_id, graph, entities, vectors.facts, judgement, piece_artifacts, now
        )
        _link(conn, request, graph, entities, facts, piece_artifacts)
        op.counts.update(
            entities_created=sum(e.created for e in _distinct(entities)),
            edges_created=sum(e.created for e in facts.stated),
            edges_superseded=len(facts.superseded),
        )
        save_inferences(conn, op.call)
    return _response(request, artifact_id, graph, entities, facts, len(chunks))


def _link(
    conn,
    request: TextToRemember,
    graph: TextGraph,
    entities: dict[str, StoredEntity],
    facts: FactsStored,
    piece_artifacts: Sequence[int],
) -> None:
    """Provenance: every entity listed or named by an edge, every edge stated (never a contradicted
    one), each to the artifact (text or chunk) that says it; sessions: the same entities and edges."""
    entity_ids = [entities[e.normalized_name].id for e in graph.entities]
    graph_writes.link(
        conn,
        entity_artifacts=[
            (entities[e.normalized_name].id, piece_artifacts[p]) for e in graph.entities for p in e.pieces
        ],
        edge_artifacts=[(edge.row["id"], piece_artifacts[p]) for edge in facts.stated for p in edge.pieces],
        session_id=request.session_id,
        session_entities=entity_ids,
        session_edges=[edge.row["id"] for edge in facts.stated],
    )


def _distinct(entities: dict[str, StoredEntity]) -> list[StoredEntity]:
    return list({entity.id: entity for entity in entities.values()}.values())


def _response(
    request: TextToRemember,
    artifact_id: int,
    graph: TextGraph,
    entities: dict[str, StoredEntity],
    facts: FactsStored,
    chunk_count: int,
) -> dict:
    body: dict = {}
    if request.session_id is not None:
        body["session_id"] = request.session_id
    seen = [entities[e.normalized_name] for e in graph.entities]
    body.update(
        dataset=request.dataset,
        artifact_id=artifact_id,
        entities=[
            {"id": e.id, "name": e.name, "type": e.type, "description": e.description, "created": e.created}
            for e in {entity.id: entity for entity in seen}.values()
        ],
        edges=[_edge_body(edge.row, edge.created) for edge in facts.stated],
        superseded=[
            {
                "id": row["id"],
                "invalid_at": rfc3339(row["invalid_at"]),
                "expired_at": rfc3339(row["expired_at"]),
            }
            for row in facts.superseded
        ],
        chunks=chunk_count,
    )
    return body


def _edge_body(row: dict, created: bool) -> dict:
    body = {
        key: row[key]
        for key in (
            "id",
            "source_id",
            "target_id",
            "source",
            "target",
            "relation",
            "description",
            "artifact_id",
        )
    }
    body["valid_at"] = rfc3339(row["valid_at"])
    if row["invalid_at"] is not None:
        body["invalid_at"] = rfc3339(row["invalid_at"])
    body["created_at"] = rfc3339(row["created_at"])
    body["created"] = created
    return body
