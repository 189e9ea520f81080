"""search: the ranked context of a question, without an LLM call (POST /v1/gb/search).

A search is query's `"answer": false` (memory/query.py, then memory/retrieval_only.py): the same
call, the same retrieval (retrieval.retrieve: the keyword statement while the question is
embedded, then one context statement) and the same ranking (memory/ranking.py), asked with the
caller's similarity threshold and filters and with no token budget (nothing is rendered into a
prompt: `limit` cuts each list instead). Each entity, fact and passage then comes with its
relevance and why it was retrieved. One embeddings request; on a warm container 3 SQL round trips:
the keyword statement (with BEGIN), the context statement (with COMMIT), the inferences' row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gligabao.db.retrieval_filters import RetrievalFilters
from gligabao.limits import Limits
from gligabao.memory import query
from gligabao.memory.ports import Memory
from gligabao.memory.retrieval import Context
from gligabao.model import Passage, StoredEdge, StoredEntity

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


def is_direct(scored: Scored) -> bool:
    """Whether the query itself found the item (a keyword, vector or recent match), not only a seed
    it hangs from. An end of a kept fact has its fact's score, so an entity reached only through
    Acme ties Acme whenever the fact outscores Acme's own match: at equal scores the direct match
    comes first, then the lower id."""
    return scored.reasons != (EXPANSION,)


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
    limits = search_limits(memory.limits, request)
    retrieved = query.answer(
        memory,
        query.Question(
            user_id=request.user_id,
            query=request.query,
            dataset=request.dataset,
            request_id=request.request_id,
            deadline=request.deadline,
            answer=False,
            with_series=False,
            filters=request.filters if request.filters != RetrievalFilters() else None,
            limits=limits,
        ),
    )
    assert retrieved.context is not None  # answer=False: the retrieved context, never an answer
    return scored_result(
        request.dataset,
        retrieved.context,
        request.limit,
        limits.rank_similarity_threshold,
        request.filters.entity_types,
    )


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
        found.sort(key=lambda s: (-s.score, not is_direct(s), key(s.item)))
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
