"""Path types and response models of the read-back routes: a session, an artifact, an entity's
timeline. A read back shows rows as stored: every time field is present, null when unset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import unquote

from pydantic import AfterValidator, BaseModel, Field

from gligabao.api.models import edge_fields
from gligabao.api.validation import resolve_session_id
from gligabao.model import MEMORY_KINDS, ArtifactHeader, EntityDetails, RecordedEdge, StoredEntity
from gligabao.timefmt import rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.memory import readback

MAX_ROW_ID = 2**63 - 1  # gb_* ids are bigint
METADATA_DESCRIPTION = "the metadata given with the remember ({} without; a chunk has its text's)"
MEMORY_KIND_DESCRIPTION = (
    "what the text is to its caller, remember's `kind`: knowledge (the default) or episode; a chunk has its "
    "text's, an image knowledge"
)
ARTIFACT_KINDS = ("text", "image", "facts")


def _artifact_kind(value: str | None) -> str | None:
    if value is not None and value not in (*ARTIFACT_KINDS, *MEMORY_KINDS):
        raise ValueError(f"kind must be one of {', '.join((*ARTIFACT_KINDS, *MEMORY_KINDS))}")
    return value


KindFilter = Annotated[
    str | None,
    AfterValidator(_artifact_kind),
    Field(
        description="only the artifacts of this kind: text, image or facts (kind), knowledge or episode "
        "(memory_kind)",
        json_schema_extra={"enum": [*ARTIFACT_KINDS, *MEMORY_KINDS]},
    ),
]


def _path_session_id(value: str) -> str:
    """The session in the path, percent-decoded, by the seed's rule (trimmed, at most 128 bytes,
    no control characters); empty is not a session."""
    session_id = resolve_session_id(unquote(value))
    if session_id is None:
        raise ValueError("session_id is required")
    return session_id


PathSessionId = Annotated[str, AfterValidator(_path_session_id)]
RowId = Annotated[int, Field(ge=1, le=MAX_ROW_ID, description="a row id (positive)")]
PageLimit = Annotated[
    int | None,
    Field(
        ge=1,
        description="items per list of a page: default GB_READBACK_PAGE_DEFAULT (50), "
        "at most GB_READBACK_PAGE_MAX (500)",
    ),
]
PageCursor = Annotated[
    str | None, Field(max_length=1024, description="the next_cursor of the previous page, unchanged")
]


# Read back, a missing model is null, as the other fields of these records.
READ_BACK_MODEL_ID = (
    "the model that extracted it; null for the facts a caller brought and for those stored before "
    "models were recorded"
)


class Entity(BaseModel):
    id: int
    name: str
    type: str
    description: str
    model_id: str | None = Field(description=READ_BACK_MODEL_ID)

    @classmethod
    def from_domain(cls, entity: StoredEntity) -> Entity:
        return cls(
            id=entity.id,
            name=entity.name,
            type=entity.type,
            description=entity.description,
            model_id=entity.model_id,
        )


class Edge(BaseModel):
    id: int
    source_id: int
    target_id: int
    source: str
    target: str
    relation: str
    description: str
    artifact_id: int | None = Field(description="the artifact that first stated it (null once forgotten)")
    artifact_ids: list[int] = Field(description="every artifact (text or chunk) that stated or restated it")
    valid_at: str | None = Field(description="RFC 3339: when it began to hold in the world")
    invalid_at: str | None = Field(description="RFC 3339: when it stopped holding; null while it holds")
    created_at: str = Field(description="RFC 3339: when memory learned it")
    expired_at: str | None = Field(description="RFC 3339: when a later fact superseded it; null while live")
    superseded_by: int | None = Field(
        description="the edge whose fact superseded it; null while live, when only closed, or when superseded "
        "before this was recorded"
    )
    model_id: str | None = Field(description=READ_BACK_MODEL_ID)

    @classmethod
    def from_domain(cls, edge: RecordedEdge) -> Edge:
        return cls(
            **edge_fields(edge), artifact_ids=list(edge.artifact_ids), superseded_by=edge.superseded_by
        )


class SessionArtifact(BaseModel):
    id: int
    kind: str = Field(description="text, image or facts")
    reference_time: str | None = Field(description="RFC 3339: when the text was said")
    created_at: str = Field(description="RFC 3339: when it was remembered")
    status: str = Field(description="pending, running, done or failed")
    preview: str = Field(description="the text's first characters (GB_ARTIFACT_PREVIEW_CHARS)")
    chars: int = Field(description="the text's length; GET /v1/gb/artifacts/{id} gives it whole")
    chunks: int = Field(description="chunks of a long text")
    memory_kind: str = Field(
        description=MEMORY_KIND_DESCRIPTION, json_schema_extra={"enum": list(MEMORY_KINDS)}
    )
    metadata: dict[str, Any] = Field(description=METADATA_DESCRIPTION)

    @classmethod
    def from_domain(cls, artifact: ArtifactHeader) -> SessionArtifact:
        return cls(
            id=artifact.id,
            kind=artifact.kind,
            reference_time=rfc3339(artifact.reference_time),
            created_at=rfc3339(artifact.created_at),
            status=artifact.status,
            preview=artifact.preview,
            chars=artifact.chars,
            chunks=artifact.chunks,
            memory_kind=artifact.memory_kind,
            metadata=artifact.metadata,
        )


class SessionReadback(BaseModel):
    session_id: str
    dataset: str
    artifacts: list[SessionArtifact] = Field(description="the session's texts and images, oldest first")
    entities: list[Entity] = Field(
        description="every entity the session mentioned, already known ones included"
    )
    edges: list[Edge] = Field(description="every fact the session stated, restated ones included")
    next_cursor: str | None = Field(description="pass it as cursor for the next page; null on the last page")

    @classmethod
    def from_domain(cls, page: readback.SessionPage) -> SessionReadback:
        return cls(
            session_id=page.session_id,
            dataset=page.dataset,
            artifacts=[SessionArtifact.from_domain(a) for a in page.artifacts],
            entities=[Entity.from_domain(e) for e in page.entities],
            edges=[Edge.from_domain(e) for e in page.edges],
            next_cursor=page.next_cursor,
        )


class Chunk(BaseModel):
    id: int = Field(description="the chunk's own artifact id: GET it for its text")
    index: int = Field(description="position in the text, from 0")
    summary: str | None
    chars: int


class ArtifactReadback(BaseModel):
    id: int
    dataset: str
    kind: str = Field(description="text, chunk, image or facts")
    text: str
    session_id: str | None
    reference_time: str | None = Field(description="RFC 3339: when the text was said")
    created_at: str = Field(description="RFC 3339: when it was remembered")
    status: str = Field(description="pending, running, done or failed (done for every stored text today)")
    error: str | None = Field(description="why it failed; null unless status is failed")
    parent_id: int | None = Field(description="a chunk's whole text; null for a text or an image")
    chunk_index: int | None = Field(description="a chunk's position in its text")
    summary: str | None = Field(description="a chunk's summary")
    memory_kind: str = Field(
        description=MEMORY_KIND_DESCRIPTION, json_schema_extra={"enum": list(MEMORY_KINDS)}
    )
    metadata: dict[str, Any] = Field(description=METADATA_DESCRIPTION)
    chunks: list[Chunk] = Field(description="a long text's chunks, in order")
    entities: list[Entity] = Field(description="entities whose provenance names it (or one of its chunks)")
    edges: list[Edge] = Field(description="edges whose provenance names it (or one of its chunks)")

    @classmethod
    def from_domain(cls, found: readback.ArtifactReadback) -> ArtifactReadback:
        artifact = found.artifact
        return cls(
            id=artifact.id,
            dataset=artifact.dataset,
            kind=artifact.kind,
            text=artifact.text,
            session_id=artifact.session_id,
            reference_time=rfc3339(artifact.reference_time),
            created_at=rfc3339(artifact.created_at),
            status=artifact.status,
            error=artifact.error,
            parent_id=artifact.parent_id,
            chunk_index=artifact.chunk_index,
            summary=artifact.summary,
            memory_kind=artifact.memory_kind,
            metadata=artifact.metadata,
            chunks=[Chunk(id=c.id, index=c.index, summary=c.summary, chars=c.chars) for c in found.chunks],
            entities=[Entity.from_domain(e) for e in found.entities],
            edges=[Edge.from_domain(e) for e in found.edges],
        )


class EntityReadback(BaseModel):
    id: int
    dataset: str
    name: str
    type: str
    description: str
    created_at: str = Field(description="RFC 3339")
    updated_at: str = Field(description="RFC 3339: the last time a text mentioned it")
    model_id: str | None = Field(description=READ_BACK_MODEL_ID)
    sessions: list[str] = Field(description="the sessions it was discovered in")
    edges: list[Edge] = Field(
        description="its timeline: every edge touching it, live and superseded, by valid_at (none first), then id"
    )
    next_cursor: str | None = Field(description="pass it as cursor for the next page; null on the last page")

    @classmethod
    def from_domain(cls, timeline: readback.EntityTimeline) -> EntityReadback:
        entity: EntityDetails = timeline.entity
        return cls(
            id=entity.id,
            dataset=entity.dataset,
            name=entity.name,
            type=entity.type,
            description=entity.description,
            created_at=rfc3339(entity.created_at),
            updated_at=rfc3339(entity.updated_at),
            model_id=entity.model_id,
            sessions=list(entity.sessions),
            edges=[Edge.from_domain(e) for e in timeline.edges],
            next_cursor=timeline.next_cursor,
        )
