"""POST /v1/gb/search: the request (a question, `limit`, a similarity threshold, filters) and the
scored response; the filters are GET /v1/gb/edges's too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)

from gligabao.api.filter_models import SearchFilters
from gligabao.api.query_models import EdgeEvidence, EntityEvidence, PassageEvidence, QueryText
from gligabao.api.validation import (
    DatasetField,
    UserId,
)

if TYPE_CHECKING:  # the client reads these models without the memory core
    from gligabao.memory.search import Scored, SearchQuery, SearchResult

SEARCH_LIMIT_DEFAULT = 10
SEARCH_LIMIT_MAX = 100
REASONS = ("keyword", "vector", "expansion", "recent")


def _strict_int(value: object) -> object:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer")
    return value


def _threshold(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise ValueError("similarity_threshold must be a number from -1 to 1 (a cosine)")
    return float(value)


class SearchRequest(BaseModel):
    """`{"user_id": "u1", "query": "Where does Alice work?", "limit": 5, "filters": {"relations": ["works_at"]}}`"""

    model_config = ConfigDict(extra="forbid")

    user_id: UserId
    query: QueryText = Field(description="what to search for; not blank")
    dataset: DatasetField
    limit: Annotated[int, BeforeValidator(_strict_int)] = Field(
        default=SEARCH_LIMIT_DEFAULT,
        ge=1,
        le=SEARCH_LIMIT_MAX,
        description=f"at most this many entities, facts and passages each (1 to {SEARCH_LIMIT_MAX})",
    )
    similarity_threshold: Annotated[
        float | None,
        BeforeValidator(_threshold),
        WithJsonSchema(
            {
                "anyOf": [{"type": "number", "minimum": -1, "maximum": 1}, {"type": "null"}],
                "description": "the least cosine with the question of a vector match "
                "(default GB_RANK_SIMILARITY_THRESHOLD, 0.4)",
            }
        ),
    ] = None
    filters: SearchFilters = Field(default_factory=SearchFilters)

    def search_query(self, request_id: str | None, deadline: float | None) -> SearchQuery:
        from gligabao.memory.search import SearchQuery

        return SearchQuery(
            user_id=self.user_id,
            query=self.query,
            dataset=self.dataset,
            limit=self.limit,
            similarity_threshold=self.similarity_threshold,
            filters=self.filters.domain(),
            request_id=request_id,
            deadline=deadline,
        )


_SCORE = Field(description="the relevance the ranked context orders by (cosine, terms, anchor); higher first")
_REASONS = Field(
    description="why it was retrieved: keyword (the question names it, or a fact touches what it names), "
    "vector (similar to the question), expansion (reached from a seed), recent (nothing matched: among "
    "the most recently updated)",
    json_schema_extra={"items": {"enum": list(REASONS)}},
)


class ScoredEntity(EntityEvidence):
    score: float = _SCORE
    reasons: list[str] = _REASONS


class ScoredEdge(EdgeEvidence):
    score: float = _SCORE
    reasons: list[str] = _REASONS


class ScoredPassage(PassageEvidence):
    score: float = _SCORE
    reasons: list[str] = _REASONS


def _scored(model, found: Scored) -> Any:
    base = model.__mro__[1].from_domain(found.item)
    return model(**base.model_dump(), score=found.score, reasons=list(found.reasons))


class SearchResponse(BaseModel):
    dataset: str
    entities: list[ScoredEntity] = Field(description="best first")
    edges: list[ScoredEdge] = Field(description="the facts, best first")
    passages: list[ScoredPassage] = Field(description="chunks of long texts, best first")

    @classmethod
    def from_domain(cls, result: SearchResult) -> SearchResponse:
        return cls(
            dataset=result.dataset,
            entities=[_scored(ScoredEntity, s) for s in result.entities],
            edges=[_scored(ScoredEdge, s) for s in result.edges],
            passages=[_scored(ScoredPassage, s) for s in result.passages],
        )
