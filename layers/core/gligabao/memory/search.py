"""search: the ranked context of a question, without an LLM call (POST /v1/gb/search).

The same retrieval as query's (retrieval.retrieve: the keyword statement while the question is
embedded, then one context statement, ranked by memory/ranking.py), with the caller's `limit`,
similarity threshold and filters. Each entity, fact and passage comes with its relevance and why
it was retrieved. One embeddings request; on a warm container 3 SQL round trips: the keyword
statement (with BEGIN), the context statement (with COMMIT), the inferences' transaction.
"""

from __future__ import annotations

from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field

from gligabao.db.retrieval_filters import RetrievalFilters
from gligabao.errors import NotFound
from gligabao.limits import Limits
from gligabao.memory.operation import operation
from gligabao.memory.ports import Memory
from gligabao.memory.query import embedding_pool, known_dataset
from gligabao.memory.retrieval import Context, retrieve
from gligabao.model import Passage, StoredEdge, StoredEntity
from gligabao.observability.inferences import CallContext, save_inferences, unsaved_on_failure

# Why an item was retrieved.
KEYWORD = "keyword"  # the question names it (a keyword seed), or a fact touches one that it names
VECTOR = "vector"  # its vector is similar to the question's
EXPANSION = "expansion"  # reached from a seed: a fact around it, or an end of a kept fact
RECENT = "recent"  # nothing matched: among the most recently updated entities


@dataclass(frozen=True)
class SearchQuery:
    user_id: str
    query: str
    dataset: str = "main"
    limit: int = 10  # at most this many entities, facts and passages each
    similarity_threshold: float | None = None  # None: the deployment's GB_RANK_SIMILARITY_THRESHOLD
    filters: RetrievalFilters = field(default_factory=RetrievalFilters)
    request_id: str | None = None
    deadline: float | None = None


@dataclass(frozen=True)
class Scored:
    """An entity, fact or passage with its relevance and why it was retrieved."""

    item: StoredEntity | StoredEdge | Passage
    score: float
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class SearchResult:
    dataset: str
    entities: list[Scored]
    edges: list[Scored]
    passages: list[Scored]


def search_limits(limits: Limits, request: SearchQuery) -> Limits:
    """The ranked retrieval, with the request's threshold and enough of each kind for `limit`, and
    no token budget or relevance margin: nothing is rendered into a prompt, `limit` cuts instead."""
    want = request.limit
    threshold = (
        limits.rank_similarity_threshold
        if request.similarity_threshold is None
        else request.similarity_threshold
    )
    return limits.model_copy(
        update={
            "retrieval": "ranked",
            "rank_similarity_threshold": threshold,
            "similar_entities": max(limits.similar_entities, want),
            "similar_edges": max(limits.similar_edges, want),
            "similar_chunks": max(limits.similar_chunks, want),
            "similar_summaries": max(limits.similar_summaries, want),
            "passages_with_text": want,
            "passages_summary_only": 0,
            "context_token_budget": 10**9,
            "rank_relevance_margin": float("inf"),
        }
    )


def search(memory: Memory, request: SearchQuery) -> SearchResult:
    """The user's dataset's most relevant entities, facts and passages for `request.query`."""
    with operation(
        memory,
        "query",
        user_id=request.user_id,
        dataset=request.dataset,
        session_id=None,
        request_id=request.request_id,
    ) as op:
        embedder = memory.embedder  # 503 before anything
        limits = search_limits(memory.limits, request)
        known = getattr(memory, "known_datasets", {})
        key = (request.user_id, request.dataset)
        seen = key in known
        with memory.database.transaction(
            request.user_id, None if seen else request.dataset, pipeline=True
        ) as uow:
            if not seen and uow.dataset_id is None:
                raise NotFound(f"dataset {request.dataset!r} not found")
            embedding = embedding_pool().submit(_embed, embedder, op.call, request)
            try:
                context = retrieve(
                    uow,
                    request.dataset,
                    request.query,
                    embedding,
                    limits,
                    filters=request.filters if _any(request.filters) else None,
                )
                op.call.dataset_id = context.dataset_id
                known_dataset(known, key)
            except NotFound:
                known.pop(key, None)
                raise
            finally:
                wait_for([embedding])
        with unsaved_on_failure(op.call), memory.database.transaction(request.user_id, pipeline=True) as uow:
            save_inferences(uow.conn, op.call)  # BEGIN, the INSERT and COMMIT: one round trip
        result = scored_result(
            request.dataset,
            context,
            request.limit,
            limits.rank_similarity_threshold,
            request.filters.entity_types,
        )
        op.counts.update(
            search_entities=len(result.entities),
            search_edges=len(result.edges),
            search_passages=len(result.passages),
        )
    return result


def scored_result(
    dataset: str, context: Context, limit: int, threshold: float, entity_types: tuple[str, ...] = ()
) -> SearchResult:
    """The ranked context as scored lists, best first, each cut at `limit`; only the entities of
    `entity_types` when given (the facts already have an end of one of them)."""
    keyword = set(context.keyword_seeds)
    similar_seeds, fallback, similar_edges = (
        set(context.similarity_seeds),
        set(context.fallback_seeds),
        set(context.similar_edges),
    )

    def entity_reasons(entity: StoredEntity) -> tuple[str, ...]:
        cosine = context.similarity.get(("entity", entity.id))
        reasons = [
            KEYWORD if entity.id in keyword else None,
            VECTOR if entity.id in similar_seeds or (cosine is not None and cosine >= threshold) else None,
            RECENT if entity.id in fallback else None,
        ]
        found = tuple(r for r in reasons if r)
        return found or (EXPANSION,)

    def edge_reasons(edge: StoredEdge) -> tuple[str, ...]:
        reasons = [
            KEYWORD if keyword & {edge.source_id, edge.target_id} else None,
            VECTOR if edge.id in similar_edges else EXPANSION,
        ]
        return tuple(r for r in reasons if r)

    def best_first(items: list, kind: str, key, reasons) -> list[Scored]:
        found = [
            Scored(item, round(context.scores.get((kind, key(item)), 0.0), 6), reasons(item))
            for item in items
        ]
        found.sort(key=lambda s: -s.score)  # stable: the ranking's order breaks ties
        return found[:limit]

    return SearchResult(
        dataset=dataset,
        entities=best_first(
            [e for e in context.entities if not entity_types or e.type in entity_types],
            "entity",
            lambda e: e.id,
            entity_reasons,
        ),
        edges=best_first(context.edges, "edge", lambda e: e.id, edge_reasons),
        passages=best_first(context.passages, "passage", lambda p: p.artifact_id, lambda p: (VECTOR,)),
    )


def _any(filters: RetrievalFilters) -> bool:
    return filters != RetrievalFilters()


def _embed(embedder, call: CallContext, request: SearchQuery) -> list[float]:
    return embedder.embed(call, [request.query], "embed", deadline=request.deadline)[0]
