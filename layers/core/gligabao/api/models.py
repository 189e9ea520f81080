"""Response models of the endpoints (the request models live beside their routes)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class DatasetSummary(BaseModel):
    name: str
    created_at: str = Field(description="RFC 3339, UTC")
    artifacts: int = Field(description="texts and images remembered (chunks not counted)")
    entities: int
    edges: int = Field(description="live edges: not superseded")


class DatasetList(BaseModel):
    datasets: list[DatasetSummary]


class DatasetDeleted(BaseModel):
    dataset: str
    deleted: bool


class ProviderState(BaseModel):
    configured: bool


class DatabaseState(BaseModel):
    ok: bool
    schema_version: int | None = Field(default=None, exclude_if=lambda value: value is None)
    error: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="why the database is not usable; omitted when it is",
    )


class Health(BaseModel):
    status: str
    version: str
    database: DatabaseState
    providers: dict[str, ProviderState]
    missing: list[str]


class ErrorBody(BaseModel):
    error: str
