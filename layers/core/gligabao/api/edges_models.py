"""GET /v1/gb/edges/{id} and GET /v1/gb/edges: a fact with its provenance, and pages of facts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from gligabao.api.filter_models import SearchFilters
from gligabao.api.readback_models import METADATA_DESCRIPTION, Edge
from gligabao.errors import BadRequest
from gligabao.inputs import InvalidInput, strict_json
from gligabao.timefmt import rfc3339

if TYPE_CHECKING:
    from gligabao.db.retrieval_filters import RetrievalFilters
    from gligabao.memory.edges import EdgeDetails, EdgePage, EdgeStatement, LinkedEdge, ProvenanceArtifact

# The query string of GET /v1/gb/edges: each filter of a search, a list as comma-separated values
# (API Gateway joins a repeated parameter so), the metadata as a JSON object.
LIST_FILTERS = ("entity_types", "relations", "session_ids")
FILTER_PARAMETERS = (
    *LIST_FILTERS,
    "metadata",
    "valid_from",
    "valid_to",
    "created_from",
    "created_to",
    "include_expired",
)
PAGE_PARAMETERS = ("user_id", "dataset", "limit", "cursor")


def filters_from_query(parameters: dict[str, str]) -> RetrievalFilters:
    """The filters of a query string; an unknown parameter or a bad value is a 400."""
    unknown = sorted(set(parameters) - set(FILTER_PARAMETERS) - set(PAGE_PARAMETERS))
    if unknown:
        raise BadRequest(f"unknown query parameter: {', '.join(unknown)}")
    given: dict[str, Any] = {}
    for name in FILTER_PARAMETERS:
        value = parameters.get(name)
        if value is None:
            continue
        if name in LIST_FILTERS:
            given[name] = value.split(",")
        elif name == "metadata":
            given[name] = _metadata(value)
        elif name == "include_expired":
            if value not in ("true", "false"):
                raise BadRequest("include_expired must be true or false")
            given[name] = value == "true"
        else:
            given[name] = value
    try:
        return SearchFilters.model_validate(given).domain()
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        message = str(first.get("msg", "is invalid")).removeprefix("Value error, ")
        raise BadRequest(f"{where}: {message}" if where else message) from None


def _metadata(value: str) -> Any:
    """The metadata filter of a query string: JSON by the rules of every input (gligabao/inputs.py)."""
    try:
        return strict_json(value, where="metadata")
    except InvalidInput:
        raise
    except ValueError:  # no JSON at all
        raise BadRequest("metadata must be a JSON object") from None


class ProvenanceArtifactOut(BaseModel):
    id: int
    kind: str = Field(description="text, chunk, image or facts")
    session_id: str | None
    parent_id: int | None = Field(description="a chunk's whole text")
    reference_time: str | None = Field(description="RFC 3339: when the text was said")
    created_at: str = Field(description="RFC 3339: when it was remembered")
    metadata: dict[str, Any] = Field(description=METADATA_DESCRIPTION)

    @classmethod
    def from_domain(cls, artifact: ProvenanceArtifact) -> ProvenanceArtifactOut:
        return cls(
            id=artifact.id,
            kind=artifact.kind,
            session_id=artifact.session_id,
            parent_id=artifact.parent_id,
            reference_time=rfc3339(artifact.reference_time),
            created_at=rfc3339(artifact.created_at),
            metadata=artifact.metadata,
        )


class LinkedEdgeOut(BaseModel):
    id: int
    relation: str
    description: str
    valid_at: str | None
    invalid_at: str | None
    created_at: str
    expired_at: str | None

    @classmethod
    def from_domain(cls, edge: LinkedEdge) -> LinkedEdgeOut:
        return cls(
            id=edge.id,
            relation=edge.relation,
            description=edge.description,
            valid_at=rfc3339(edge.valid_at),
            invalid_at=rfc3339(edge.invalid_at),
            created_at=rfc3339(edge.created_at),
            expired_at=rfc3339(edge.expired_at),
        )


class EdgeStatementOut(BaseModel):
    id: int
    artifact_id: int | None = Field(description="the artifact that said it (a text, a chunk, a correction)")
    kind: str = Field(description="said, or correction: a correction replaced the fact over this period")
    valid_at: str | None = Field(description="the start it gave; null: unknown")
    invalid_at: str | None = Field(description="the end it gave; null: open")
    said_at: str = Field(description="when it was said: its text's reference time, a correction's own time")
    holds_until: str | None = Field(
        description="how far it holds now (a later-said fact may have ended it); null: open, or nowhere "
        "when its start is unknown"
    )
    ended_by: int | None = Field(
        description="the contradicting fact's edge whose start ended it; null when its own fact ended it"
    )

    @classmethod
    def from_domain(cls, statement: EdgeStatement) -> EdgeStatementOut:
        return cls(
            id=statement.id,
            artifact_id=statement.artifact_id,
            kind=statement.kind,
            valid_at=rfc3339(statement.valid_at),
            invalid_at=rfc3339(statement.invalid_at),
            said_at=rfc3339(statement.said_at),
            holds_until=rfc3339(statement.ends_at),
            ended_by=statement.cut_by if statement.cut else None,
        )


class EdgeResource(Edge):
    dataset: str
    artifacts: list[ProvenanceArtifactOut] = Field(
        description="where it comes from: the artifact that first stated it and every one that restated it"
    )
    sessions: list[str] = Field(description="the sessions that stated it")
    superseded_by_edge: LinkedEdgeOut | None = Field(
        description="the fact that superseded it; null while live"
    )
    supersedes: list[LinkedEdgeOut] = Field(description="the facts it superseded")
    history: list[EdgeStatementOut] = Field(
        default_factory=list,
        description="what each text, correction and restore said of the fact, said first first, and how far "
        "each holds now: the trail of its period",
    )

    @classmethod
    def from_details(cls, details: EdgeDetails) -> EdgeResource:
        return cls(
            **Edge.from_domain(details.edge).model_dump(),
            dataset=details.dataset,
            artifacts=[ProvenanceArtifactOut.from_domain(a) for a in details.artifacts],
            sessions=details.sessions,
            superseded_by_edge=LinkedEdgeOut.from_domain(details.superseded_by)
            if details.superseded_by
            else None,
            supersedes=[LinkedEdgeOut.from_domain(e) for e in details.supersedes],
            history=[EdgeStatementOut.from_domain(s) for s in details.statements],
        )


class EdgeList(BaseModel):
    dataset: str
    edges: list[Edge] = Field(description="by id, oldest first")
    next_cursor: str | None = Field(description="pass it as cursor for the next page; null on the last page")

    @classmethod
    def from_domain(cls, page: EdgePage) -> EdgeList:
        return cls(
            dataset=page.dataset,
            edges=[Edge.from_domain(e) for e in page.edges],
            next_cursor=page.next_cursor,
        )
