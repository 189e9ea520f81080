"""POST /v1/gb/search: the request (a question, `limit`, a similarity threshold, filters) and the
scored response; the filters are GET /v1/gb/edges's too."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    WithJsonSchema,
    model_validator,
)

from gligabao.api.metadata_models import MetadataFilter
from gligabao.api.query_models import EdgeEvidence, EntityEvidence, PassageEvidence
from gligabao.api.validation import (
    NON_BLANK_TEXT_PATTERN,
    RFC3339,
    DatasetField,
    UserId,
    resolve_session_id,
    time_schema,
)
from gligabao.db.retrieval_filters import RetrievalFilters
from gligabao.timefmt import parse_rfc3339

if TYPE_CHECKING:  # the client reads these models without the memory core
    from gligabao.memory.search import Scored, SearchQuery, SearchResult

SEARCH_LIMIT_DEFAULT = 10
SEARCH_LIMIT_MAX = 100
FILTER_VALUES_MAX = 50  # values of one list filter
REASONS = ("keyword", "vector", "expansion", "recent")


def _time(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str) or not RFC3339.fullmatch(value.strip()):
        raise ValueError("must be an RFC 3339 time with an offset, e.g. 2022-06-01T00:00:00Z")
    try:
        return parse_rfc3339(value)
    except (ValueError, OverflowError):
        raise ValueError("is not a valid time") from None


def Time(description: str):
    return Annotated[datetime | None, BeforeValidator(_time), WithJsonSchema(time_schema(description))]


def _words(value: object) -> object:
    """A list of 1 to FILTER_VALUES_MAX non-blank strings of at most 200 characters, trimmed."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or len(value) > FILTER_VALUES_MAX:
        raise ValueError(f"must be a list of 1 to {FILTER_VALUES_MAX} strings")
    if not all(isinstance(item, str) and item.strip() and len(item) <= 200 for item in value):
        raise ValueError("each value must be a non-blank string of at most 200 characters")
    return [item.strip() for item in value]


def _sessions(value: object) -> object:
    words = _words(value)
    if words is None:
        return None
    try:
        return [resolve_session_id(item) for item in words]
    except Exception as error:  # the session rule's own message
        raise ValueError(str(getattr(error, "message", error))) from None


def Words(description: str, check=_words):
    return Annotated[
        list[str] | None,
        BeforeValidator(check),
        WithJsonSchema(
            {
                "anyOf": [
                    {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "maxItems": FILTER_VALUES_MAX,
                    },
                    {"type": "null"},
                ],
                "description": description,
            }
        ),
    ]


class SearchFilters(BaseModel):
    """What a search (or a list of facts) may return. Unknown keys are a 400."""

    model_config = ConfigDict(extra="forbid")

    entity_types: Words("entities of these types, and facts with an end of one of them") = None
    relations: Words("facts of these relations (as stored: lowercase snake_case)") = None
    session_ids: Words("what these sessions mentioned or stated", _sessions) = None
    metadata: MetadataFilter
    valid_from: Time("facts still valid at or after this time (invalid_at null or later)") = None
    valid_to: Time("facts valid before this time (valid_at earlier); with valid_from: an overlap") = None
    created_from: Time("learned at or after this time (created_at)") = None
    created_to: Time("learned before this time (created_at)") = None
    include_expired: StrictBool = Field(
        default=False, description="add superseded facts (live ones only by default)"
    )

    @model_validator(mode="after")
    def _windows(self) -> SearchFilters:
        for start, end in (("valid_from", "valid_to"), ("created_from", "created_to")):
            if getattr(self, start) and getattr(self, end) and getattr(self, start) >= getattr(self, end):
                raise ValueError(f"{start} must be before {end}")
        return self

    def domain(self) -> RetrievalFilters:
        return RetrievalFilters(
            entity_types=tuple(self.entity_types or ()),
            relations=tuple(self.relations or ()),
            session_ids=tuple(s for s in self.session_ids or () if s),
            metadata=self.metadata or None,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            created_from=self.created_from,
            created_to=self.created_to,
            include_expired=self.include_expired,
        )


def _query_text(value: object) -> object:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    if not value.strip():
        raise ValueError("query must not be empty")
    return value.strip()


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
    query: Annotated[
        str,
        BeforeValidator(_query_text),
        WithJsonSchema({"type": "string", "minLength": 1, "pattern": NON_BLANK_TEXT_PATTERN}),
    ] = Field(description="what to search for; not blank")
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
