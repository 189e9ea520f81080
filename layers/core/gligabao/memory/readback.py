"""Reading memory back: what a session touched, what an artifact stated, and an entity's timeline
("what did we know, and when did it change?"). Reads only; each is one statement in one unit of
work of the user, so no id reaches another user's rows.

The long lists (a session's artifacts, entities and edges; an entity's edges) come in pages: at
most `limit` items per list, and a `next_cursor` while more remain. A cursor is opaque to the
caller: base64url of where each list stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

from gligabao.db import readback as rows
from gligabao.errors import BadRequest, NotFound
from gligabao.limits import Limits
from gligabao.memory.cursors import decode_cursor, encode_cursor, optional_row_id, row_id
from gligabao.memory.cursors import time as cursor_time
from gligabao.memory.ports import Memory
from gligabao.model import (
    ArtifactHeader,
    ChunkHeader,
    EntityDetails,
    RecordedEdge,
    StoredArtifact,
    StoredEntity,
)


@dataclass(frozen=True)
class SessionPage:
    session_id: str
    dataset: str
    artifacts: list[ArtifactHeader]  # texts and images, oldest first
    entities: list[StoredEntity]  # by id
    edges: list[RecordedEdge]  # by id
    next_cursor: str | None


@dataclass(frozen=True)
class ArtifactReadback:
    artifact: StoredArtifact
    chunks: list[ChunkHeader]
    entities: list[StoredEntity]
    edges: list[RecordedEdge]


@dataclass(frozen=True)
class EntityTimeline:
    entity: EntityDetails
    edges: list[RecordedEdge]  # by valid_at (an edge without one first), then id
    next_cursor: str | None


def read_session(
    memory: Memory,
    user_id: str,
    dataset: str,
    session_id: str,
    *,
    limit: int | None = None,
    cursor: str | None = None,
    kind: str | None = None,
) -> SessionPage:
    """A page of what the session touched in the dataset, its artifacts only those of `kind` when
    given (text, image, facts; knowledge, episode); an unknown session is an empty page, an
    unknown dataset a 404."""
    take = page_size(memory.limits, limit)
    after_ids = (
        decode_cursor(
            cursor, "session", artifact=optional_row_id, entity=optional_row_id, edge=optional_row_id
        )
        if cursor
        else {"artifact": 0, "entity": 0, "edge": 0}
    )
    with memory.database.transaction(user_id, dataset) as uow:
        if uow.dataset_id is None:
            raise NotFound(f"dataset {dataset!r} not found")
        found = rows.session_rows(
            uow.conn,
            user_id=user_id,
            dataset_id=uow.dataset_id,
            session_id=session_id,
            after_artifact=after_ids["artifact"],
            after_entity=after_ids["entity"],
            after_edge=after_ids["edge"],
            take=take + 1,
            preview_chars=memory.limits.artifact_preview_chars,
            kind=kind,
        )
    artifacts, more_artifacts = _page(found.artifacts, take)
    entities, more_entities = _page(found.entities, take)
    edges, more_edges = _page(found.edges, take)
    next_cursor = None
    if more_artifacts or more_entities or more_edges:
        next_cursor = encode_cursor(
            "session",
            artifact=artifacts[-1].id if more_artifacts else None,
            entity=entities[-1].id if more_entities else None,
            edge=edges[-1].id if more_edges else None,
        )
    return SessionPage(session_id, dataset, artifacts, entities, edges, next_cursor)


def read_artifact(memory: Memory, user_id: str, artifact_id: int) -> ArtifactReadback:
    with memory.database.transaction(user_id) as uow:
        found = rows.artifact_rows(uow.conn, user_id=user_id, artifact_id=artifact_id)
    if found is None:
        raise NotFound(f"artifact {artifact_id} not found")
    return ArtifactReadback(found.artifact, found.chunks, found.entities, found.edges)


def read_entity(
    memory: Memory, user_id: str, entity_id: int, *, limit: int | None = None, cursor: str | None = None
) -> EntityTimeline:
    """The entity and a page of its timeline: every edge touching it, live and superseded."""
    take = page_size(memory.limits, limit)
    after = (
        decode_cursor(cursor, "entity", valid_at=_timeline_position, id=row_id)
        if cursor
        else {"valid_at": rows.TIMELINE_START, "id": 0}
    )
    after_valid_at, after_id = after["valid_at"], after["id"]
    with memory.database.transaction(user_id) as uow:
        found = rows.entity_rows(
            uow.conn,
            user_id=user_id,
            entity_id=entity_id,
            after_valid_at=after_valid_at,
            after_id=after_id,
            take=take + 1,
        )
    if found is None:
        raise NotFound(f"entity {entity_id} not found")
    edges, more = _page(found.edges, take)
    next_cursor = None
    if more:
        last = edges[-1]
        next_cursor = encode_cursor("entity", valid_at=rows.timeline_position(last.valid_at), id=last.id)
    return EntityTimeline(found.entity, edges, next_cursor)


def page_size(limits: Limits, limit: int | None) -> int:
    """The items per list of a page: `limit`, or the default; more than the maximum is a 400."""
    if limit is None:
        return limits.readback_page_default
    if not 1 <= limit <= limits.readback_page_max:
        raise BadRequest(f"limit must be between 1 and {limits.readback_page_max}")
    return limit


def _page(items: list, take: int) -> tuple[list, bool]:
    """The first `take` items, and whether more remain (the query read one more)."""
    return items[:take], len(items) > take


def _timeline_position(value: object) -> str:
    """A timeline key as `entity_rows` takes it: TIMELINE_START, or a time the cursor wrote (read by
    the RFC 3339 rule and written back in UTC, so the database casts nothing it did not write)."""
    if value == rows.TIMELINE_START:
        return rows.TIMELINE_START
    return rows.timeline_position(cursor_time(value))
