"""Response models of the system and datasets endpoints; each maps its domain result with
`from_domain()`, so the OpenAPI document and what is returned are one definition."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from gligabao.timefmt import rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory import datasets, health
    from gligabao.model import StoredEdge


MODEL_ID_DESCRIPTION = (
    "the model that extracted it (the extract stage's, an image's image stage's); omitted for the "
    "facts a caller brought and for those stored before models were recorded"
)


def absent(value: object) -> bool:
    """Fields excluded when None (`Field(exclude_if=absent)`): omitted from the body, not null."""
    return value is None


def edge_fields(edge: StoredEdge) -> dict:
    """A stored edge as every response writes it: its ids, names and relation, its times in RFC 3339."""
    return {
        "id": edge.id,
        "source_id": edge.source_id,
        "target_id": edge.target_id,
        "source": edge.source,
        "target": edge.target,
        "relation": edge.relation,
        "description": edge.description,
        "artifact_id": edge.artifact_id,
        "valid_at": rfc3339(edge.valid_at),
        "invalid_at": rfc3339(edge.invalid_at),
        "created_at": rfc3339(edge.created_at),
        "expired_at": rfc3339(edge.expired_at),
        "model_id": edge.model_id,
    }


class EdgeOut(BaseModel):
    """A stored fact as the query evidence and the graph export write it: null or empty fields
    omitted, times in RFC 3339."""

    id: int = Field(description="gb_edges row id")
    source_id: int
    target_id: int
    source: str = Field(description="the source entity's name")
    target: str = Field(description="the target entity's name")
    relation: str
    description: str | None = Field(default=None, exclude_if=absent, description="omitted when empty")
    artifact_id: int | None = Field(
        default=None,
        exclude_if=absent,
        description="the artifact the fact was inferred from; omitted if unset",
    )
    valid_at: str | None = Field(default=None, exclude_if=absent, description="RFC 3339; omitted when null")
    invalid_at: str | None = Field(default=None, exclude_if=absent, description="RFC 3339; omitted when null")
    created_at: str = Field(description="RFC 3339: when the graph learned it")
    expired_at: str | None = Field(
        default=None, exclude_if=absent, description="RFC 3339: when it was superseded; omitted while live"
    )
    model_id: str | None = Field(default=None, exclude_if=absent, description=MODEL_ID_DESCRIPTION)

    @classmethod
    def from_domain(cls, edge: StoredEdge):
        return cls(**{**edge_fields(edge), "description": edge.description or None})


class DatasetSummary(BaseModel):
    name: str
    created_at: str = Field(description="RFC 3339, UTC")
    artifacts: int = Field(description="texts and images remembered (chunks not counted)")
    queued: int = Field(
        description="of the artifacts, asynchronous and batch remembers not done yet: pending "
        "(queued, or waiting for a retry) or running; 0 when the dataset's last texts are stored"
    )
    failed: int = Field(
        description="of the artifacts, asynchronous remembers that failed (GET /v1/gb/artifacts/{id} says why)"
    )
    entities: int
    edges: int = Field(description="live edges: not superseded")
    ontology: str | None = Field(default=None, description="the ontology attached to it; null without one")


class DatasetList(BaseModel):
    datasets: list[DatasetSummary] = Field(description="by name")
    next_cursor: str | None = Field(
        default=None,
        exclude_if=absent,
        description="pass it as cursor for the next page; omitted on the last page (the response of a "
        "single page is what it was before pages)",
    )

    @classmethod
    def from_domain(
        cls, summaries: list[datasets.DatasetSummary], next_cursor: str | None = None
    ) -> DatasetList:
        return cls(
            next_cursor=next_cursor,
            datasets=[
                DatasetSummary(
                    name=s.name,
                    created_at=rfc3339(s.created_at),
                    artifacts=s.artifacts,
                    queued=s.queued,
                    failed=s.failed,
                    entities=s.entities,
                    edges=s.edges,
                    ontology=s.ontology,
                )
                for s in summaries
            ],
        )


class DatasetDeleted(BaseModel):
    dataset: str
    deleted: bool


class ProviderState(BaseModel):
    configured: bool


class DatabaseState(BaseModel):
    ok: bool
    schema_version: int | None = Field(default=None, exclude_if=absent)
    error: str | None = Field(
        default=None, exclude_if=absent, description="why the database is not usable; omitted when it is"
    )


class Health(BaseModel):
    status: str
    version: str
    database: DatabaseState
    providers: dict[str, ProviderState]
    missing: list[str]

    @classmethod
    def from_domain(cls, state: health.Health) -> Health:
        return cls(
            status="ok",
            version=state.version,
            database=DatabaseState(
                ok=state.database.ok, schema_version=state.database.schema_version, error=state.database.error
            ),
            providers={name: ProviderState(configured=ok) for name, ok in state.configured.items()},
            missing=state.missing,
        )


class ErrorBody(BaseModel):
    error: str


# What every route may answer before its own code runs (api/handler.py): an unusable configuration.
CONFIGURATION_INVALID = "the configuration is invalid (the variable is named)"
# What every route that reads the database may answer besides.
DATABASE_UNAVAILABLE = "the database is unreachable, or " + CONFIGURATION_INVALID


def documented_responses(ok: str, errors: dict[int, str]) -> dict[int, dict]:
    """A route's `responses` for the OpenAPI document: its 200 (the model of its return annotation)
    and exactly the error statuses it answers, each with the {"error": ...} body."""
    return {
        200: {"description": ok},
        **{
            status: {"description": why, "content": {"application/json": {"model": ErrorBody}}}
            for status, why in sorted(errors.items())
        },
    }


def database_route_responses(ok: str, errors: dict[int, str]) -> dict[int, dict]:
    """`documented_responses` of a route that reads the database: its own errors and the 503."""
    return documented_responses(ok, {**errors, 503: DATABASE_UNAVAILABLE})
