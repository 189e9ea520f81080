"""The typed records every layer shares: one shape of a stored entity, one of a stored edge.

The database layer fills them straight from rows (psycopg's `class_row`: the column names are
the field names); the memory core returns them; the api layer maps them to response models.
They import nothing of the project, so any layer may use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class StoredEntity:
    id: int
    name: str
    type: str
    description: str
    created: bool = False  # created by the call that returns it (remember), else already stored


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
