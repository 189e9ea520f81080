"""The filters of POST /v1/gb/search, of POST /v1/gb/query and of GET /v1/gb/edges: what a retrieval
or a list may return (db/retrieval_filters.py applies them). Unknown keys are a 400."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

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
from gligabao.api.validation import resolve_session_id, rfc3339_time, time_schema

if TYPE_CHECKING:  # the client reads these models without the memory core
    from gligabao.db.retrieval_filters import RetrievalFilters

FILTER_VALUES_MAX = 50  # values of one list filter


def _time(value: object) -> datetime | None:
    return rfc3339_time(value)


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
        from gligabao.db.retrieval_filters import RetrievalFilters

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
