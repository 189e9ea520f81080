"""The typed records every layer shares: one shape of a stored entity, one of a stored edge.

The database layer fills them straight from rows (psycopg's `class_row`: the column names are
the field names); the memory core returns them; the api layer maps them to response models.
They import nothing of the project, so any layer may use them.
"""

from __future__ import annotations

import functools
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from typing import Any, TypeVar

T = TypeVar("T")

# The image formats remember accepts (the API's contract and the memory core's check).
IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
# What a remembered text is to its caller (the gligabao server's `kind`); the first is the default.
MEMORY_KINDS = ("knowledge", "episode")


def sniffed_media_type(data: bytes) -> str | None:
    """The media type the file's first bytes (its magic number) say, among IMAGE_MEDIA_TYPES."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(frozen=True)
class StoredEntity:
    id: int
    name: str
    type: str
    description: str
    created: bool = False  # created by the call that returns it (remember), else already stored
    latitude: float | None = None  # a place's coordinates (geo), when known to the call
    longitude: float | None = None
    model_id: str | None = None  # the model that extracted it; None: facts a caller brought, or older rows


@dataclass(frozen=True)
class StoredEdge:
    """A fact: an edge between two entities, with its two time axes (SPEC section 5)."""

    id: int
    source_id: int
    target_id: int
    relation: str
    description: str
    artifact_id: int | None
    valid_at: datetime | None  # when it began to hold in the world
    invalid_at: datetime | None  # when it stopped holding
    created_at: datetime  # when the graph learned it
    expired_at: datetime | None = None  # when a later fact superseded it
    source: str = ""  # the endpoints' names, when read with them
    target: str = ""
    created: bool = False  # created by the call that returns it (remember)
    model_id: str | None = None  # the model that extracted it; None: facts a caller brought, or older rows


def built_from_values(cls: type[T], **values: Any) -> T:
    """An instance of the frozen dataclass `cls` from `values` (its fields' defaults for the rest),
    without its generated `__init__`: a frozen dataclass sets each field through
    `object.__setattr__`, 2.4 us for a StoredEdge against 0.6 this way, and a query's context
    statement returns some 900 entities and edges at 10,000 facts (memory/retrieval.py). Equal,
    and of equal hash, to the instance `__init__` would make when `values` name every field
    without a default (nothing checks it: the caller's list is fixed); only for classes without
    `__post_init__` or slots."""
    built = object.__new__(cls)
    built.__dict__.update(field_defaults(cls))
    built.__dict__.update(values)
    return built


@functools.cache
def field_defaults(cls: type) -> dict[str, Any]:
    """The defaults of the dataclass `cls`'s fields (those that have one), read once per class;
    ValueError for a field with a default factory (a value made afresh for each instance)."""
    if any(f.default_factory is not MISSING for f in fields(cls)):
        raise ValueError(f"{cls.__name__} has a field with a default factory")
    return {f.name: f.default for f in fields(cls) if f.default is not MISSING}


@dataclass(frozen=True)
class EndedEdge:
    """A stored edge that a remember ended: superseded (expired_at set) or closed (invalid_at only)."""

    id: int
    invalid_at: datetime
    expired_at: datetime | None


@dataclass(frozen=True)
class Passage:
    """A chunk of a long text given to the LLM: with its text (the best ones) and its summary
    when the summary search found it."""

    artifact_id: int
    parent_id: int
    index: int
    summary: str | None
    text: str | None


# --- reading memory back (GET sessions, artifacts and entities) ------------------------------


@dataclass(frozen=True)
class RecordedEdge(StoredEdge):
    """A stored edge as read back: with the edge that superseded it and every artifact that stated it."""

    superseded_by: int | None = None  # the edge of the contradicting fact (set since migration 0005)
    artifact_ids: tuple[int, ...] = ()  # the artifacts (texts or chunks) that created or restated it


@dataclass(frozen=True)
class ArtifactHeader:
    """An artifact as a session lists it: what it is, without its (possibly long) text."""

    id: int
    kind: str  # 'text', 'image' or 'facts'
    session_id: str | None
    reference_time: datetime | None
    created_at: datetime
    status: str
    preview: str  # the text's first characters (limits.artifact_preview_chars)
    chars: int  # the text's length
    chunks: int
    memory_kind: str = "knowledge"  # or 'episode' (MEMORY_KINDS)
    metadata: dict = field(default_factory=dict)  # the caller's labels


@dataclass(frozen=True)
class ChunkHeader:
    """A chunk of a long text, without its text (read it as an artifact of its own)."""

    id: int
    index: int
    summary: str | None
    chars: int


@dataclass(frozen=True)
class StoredArtifact:
    id: int
    dataset: str
    kind: str  # 'text', 'chunk', 'image' or 'facts'
    text: str
    session_id: str | None
    parent_id: int | None  # a chunk's whole text
    chunk_index: int | None
    summary: str | None  # a chunk's summary
    reference_time: datetime | None
    created_at: datetime
    status: str  # 'done' for every artifact stored by the synchronous remember
    error: str | None = None  # why it failed, when status is 'failed'
    memory_kind: str = "knowledge"  # or 'episode' (MEMORY_KINDS); a chunk has its text's
    metadata: dict = field(default_factory=dict)  # the caller's labels; a chunk has its text's


@dataclass(frozen=True)
class EntityDetails:
    id: int
    dataset: str
    name: str
    type: str
    description: str
    created_at: datetime
    updated_at: datetime
    sessions: tuple[str, ...] = ()  # the sessions it was discovered in
    model_id: str | None = None  # the model that extracted it


# --- geo (SPEC section 9) -----------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """A place name resolved to coordinates (degrees) by a geo resolver."""

    name: str  # as the resolver knows it ("Paris")
    latitude: float
    longitude: float
    kind: str = "place"  # city, country, ... as the resolver says
    country_code: str = ""  # ISO 3166-1 when known (alpha-2 locally, alpha-3 from Amazon Location)


@dataclass(frozen=True)
class GeoAnchor:
    """A place a nearby search is centred on: a place of the question or a matched place entity."""

    id: int  # its gb_entities row
    name: str
    latitude: float
    longitude: float
    type: str = "place"
    description: str = ""

    @property
    def entity(self) -> StoredEntity:
        return StoredEntity(self.id, self.name, self.type, self.description)


@dataclass(frozen=True)
class NearbyEntity:
    """An entity within the radius of an anchor, with its distance to the nearest one."""

    entity: StoredEntity
    latitude: float
    longitude: float
    distance_km: float
    anchor: GeoAnchor


@dataclass(frozen=True)
class Nearby:
    """The nearby search of a question: its radius, its anchors, what it found (nearest first)."""

    radius_km: float
    anchors: tuple[GeoAnchor, ...]
    entities: tuple[NearbyEntity, ...]


# --- eval trajectories (SPEC section 10) ---------------------------------------------------------

TRAJECTORY_KINDS = ("remember", "query")  # the calls whose trajectory an eval call records
