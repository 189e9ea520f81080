"""Correcting a fact by hand (PATCH /v1/gb/edges/{id}): no extraction, no resolve stage.

A correction supersedes the fact bi-temporally, as a contradicting text does (memory/temporal.py):
the stored edge is expired now (`expired_at`, `superseded_by` the new edge) and, unless it already
had an end, its `invalid_at` is the new fact's `valid_at`; the new edge, with the source and
relation of the old one and the values the caller changed (description, target, valid_at,
invalid_at), is stated by an artifact of kind 'correction'. That artifact's text records, as
JSON, who asked, why when they said, the fact corrected and its previous values.

A correction that only sets `invalid_at` ends the fact without a replacement: the edge stays, live
and closed at that time (as a restatement that says when a fact ended closes it), and the
correction artifact joins its provenance.

The one model call a correction may make is one embeddings request: the new fact's vector when
its description or target changes, and the new target entity's when the name is not in the
dataset (created as type 'unknown', as extraction does for a name no entity lists).

An edge another user owns is NotFound, the same answer as an edge that does not exist; an edge
already superseded is a Conflict: correct the fact that superseded it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime

from gligabao.db import corrections as correction_rows
from gligabao.db import forget as forget_rows
from gligabao.db import graph_writes
from gligabao.db.corrections import EdgeToCorrect, NamedEntity
from gligabao.errors import BadRequest, Conflict, NotFound
from gligabao.memory.names import normalized_name
from gligabao.memory.operation import operation
from gligabao.memory.ports import Memory
from gligabao.memory.temporal import superseded_invalid_at
from gligabao.model import EndedEdge, StoredEdge
from gligabao.observability.inferences import save_inferences
from gligabao.timefmt import rfc3339

ARTIFACT_KIND = "correction"
NEW_ENTITY_TYPE = "unknown"  # a target named for the first time, as extraction types an unlisted name


@dataclass(frozen=True)
class Correction:
    """What the caller changes of one fact; None leaves a value as stored."""

    user_id: str
    edge_id: int
    description: str | None = None
    target: str | int | None = None  # an entity's name (created when the dataset has none) or id
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    reason: str | None = None  # why, in the caller's words: kept in the correction artifact

    @property
    def ends_only(self) -> bool:
        return (
            self.invalid_at is not None
            and self.description is None
            and self.target is None
            and self.valid_at is None
        )


@dataclass(frozen=True)
class Corrected:
    """The fact as it now stands, the fact it superseded (none when only ended), the artifact."""

    edge: StoredEdge
    superseded: EndedEdge | None
    artifact_id: int


@dataclass(frozen=True)
class _Plan:
    """The new fact, decided before anything is written."""

    target: NamedEntity | None  # None: a new entity named `target_name`
    target_name: str
    description: str
    valid_at: datetime | None
    invalid_at: datetime | None

    def target_changed(self, stored: EdgeToCorrect) -> bool:
        return self.target is None or self.target.id != stored.target_id

    def changes(self, stored: EdgeToCorrect) -> bool:
        return (
            self.target_changed(stored)
            or self.description != stored.description
            or self.valid_at != stored.valid_at
            or self.invalid_at != stored.invalid_at
        )


def correct(
    memory: Memory, correction: Correction, *, request_id: str | None = None, deadline: float | None = None
) -> Corrected:
    if correction.ends_only:
        return _end(memory, correction)
    with memory.database.transaction(correction.user_id) as uow:
        stored = _live_edge(correction_rows.edge_to_correct(uow.conn, correction.user_id, correction.edge_id))
        plan = _plan(uow.conn, stored, correction, memory.limits.entity_name_max_chars)
    with operation(
        memory,
        "remember",
        user_id=correction.user_id,
        dataset=stored.dataset,
        session_id=None,
        request_id=request_id,
    ) as op:
        op.call.dataset_id = stored.dataset_id
        vectors = _vectors(memory, op.call, stored, plan, deadline)
        with memory.database.transaction(correction.user_id) as uow:
            # The dataset's lock (remember's and forget's), then the edge as it is now: a correction
            # that ran at the same moment may have superseded it first.
            forget_rows.lock_dataset_of_edge(uow.conn, correction.user_id, correction.edge_id)
            stored = _live_edge(
                correction_rows.edge_to_correct(uow.conn, correction.user_id, correction.edge_id)
            )
            corrected = _supersede(uow.conn, stored, correction, plan, vectors, memory.clock())
            save_inferences(uow.conn, op.call)
    return corrected


def _supersede(
    conn, stored: EdgeToCorrect, correction: Correction, plan: _Plan, vectors: _Vectors, now: datetime
) -> Corrected:
    """The writes of a correction, under the dataset's lock: the artifact, the new target when it
    is new, the new edge, the old one's end, the provenance links."""
    artifact_id = _insert_artifact(conn, stored, correction, now)
    target_id = _stored_target(conn, stored, plan, vectors.entity)
    [new] = graph_writes.insert_edges(
        conn,
        stored.dataset_id,
        [
            graph_writes.EdgeRow(
                source_id=stored.source_id,
                target_id=target_id,
                relation=stored.relation,
                description=plan.description,
                artifact_id=artifact_id,
                valid_at=plan.valid_at,
                invalid_at=plan.invalid_at,
                embedding=vectors.edge if vectors.edge is not None else stored.embedding,
            )
        ],
    )
    end = graph_writes.EdgeEnd(
        edge_id=stored.id,
        invalid_at=superseded_invalid_at(stored.invalid_at, plan.valid_at, now),
        supersede=True,
        superseded_by=new.id,
    )
    [ended] = graph_writes.end_edges(conn, stored.dataset_id, [end], now)
    _link(conn, artifact_id, new.id, stored.source_id, target_id)
    edge = correction_rows.stored_edge(conn, stored.dataset_id, new.id)
    return Corrected(edge=replace(edge, created=True), superseded=ended, artifact_id=artifact_id)


def _end(memory: Memory, correction: Correction) -> Corrected:
    """Only `invalid_at`: the fact ends then, not superseded; no model call."""
    with memory.database.transaction(correction.user_id) as uow:
        forget_rows.lock_dataset_of_edge(uow.conn, correction.user_id, correction.edge_id)
        stored = _live_edge(correction_rows.edge_to_correct(uow.conn, correction.user_id, correction.edge_id))
        _check_period(stored.valid_at, correction.invalid_at)
        if correction.invalid_at == stored.invalid_at:
            raise BadRequest("the correction changes nothing: the fact already ends then")
        artifact_id = _insert_artifact(uow.conn, stored, correction, memory.clock())
        [ended] = graph_writes.end_edges(
            uow.conn,
            stored.dataset_id,
            [graph_writes.EdgeEnd(edge_id=stored.id, invalid_at=correction.invalid_at, supersede=False)],
            memory.clock(),
        )
        _link(uow.conn, artifact_id, stored.id, stored.source_id, stored.target_id)
        edge = correction_rows.stored_edge(uow.conn, stored.dataset_id, ended.id)
    return Corrected(edge=edge, superseded=None, artifact_id=artifact_id)


def _live_edge(stored: EdgeToCorrect | None) -> EdgeToCorrect:
    if stored is None:
        raise NotFound("edge not found")
    if stored.expired_at is not None:
        raise Conflict(
            f"edge {stored.id} was superseded at {rfc3339(stored.expired_at)}: only a live fact can be "
            "corrected (correct the fact that superseded it)"
        )
    return stored


def _plan(conn, stored: EdgeToCorrect, correction: Correction, name_max_chars: int) -> _Plan:
    target, target_name = _target(conn, stored, correction.target, name_max_chars)
    plan = _Plan(
        target=target,
        target_name=target_name,
        description=correction.description if correction.description is not None else stored.description,
        valid_at=correction.valid_at if correction.valid_at is not None else stored.valid_at,
        invalid_at=correction.invalid_at if correction.invalid_at is not None else stored.invalid_at,
    )
    _check_period(plan.valid_at, plan.invalid_at)
    if not plan.changes(stored):
        raise BadRequest("the correction changes nothing: every value given is the fact's already")
    return plan


def _target(
    conn, stored: EdgeToCorrect, target: str | int | None, name_max_chars: int
) -> tuple[NamedEntity | None, str]:
    """The entity the new fact points to: the stored target, an entity of the dataset by id (a
    400 when the dataset has none), or by name (None when the dataset has none: it is created)."""
    if target is None:
        return NamedEntity(stored.target_id, stored.target), stored.target
    if isinstance(target, int):
        entity = correction_rows.entity_by_id(conn, stored.dataset_id, target)
        if entity is None:
            raise BadRequest(f"target: entity {target} is not in the fact's dataset")
        return entity, entity.name
    name = " ".join(target.split())
    if len(name) > name_max_chars:
        raise BadRequest(f"target: an entity name is at most {name_max_chars} characters")
    entity = correction_rows.entity_by_name(conn, stored.dataset_id, normalized_name(name))
    return entity, entity.name if entity is not None else name


def _check_period(valid_at: datetime | None, invalid_at: datetime | None) -> None:
    if valid_at is not None and invalid_at is not None and invalid_at < valid_at:
        raise BadRequest(
            f"invalid_at ({rfc3339(invalid_at)}) is before the fact's valid_at ({rfc3339(valid_at)})"
        )


@dataclass(frozen=True)
class _Vectors:
    edge: list[float] | None = None  # the new fact's; None: the stored fact's serves
    entity: list[float] | None = None  # the new target entity's, when it is new


def _vectors(memory: Memory, call, stored: EdgeToCorrect, plan: _Plan, deadline: float | None) -> _Vectors:
    """The vectors a correction needs, in one embeddings request: the new fact's when its
    description or target changes, the new target entity's when it is new; none otherwise."""
    texts: list[str] = []
    if plan.description != stored.description or plan.target_changed(stored):
        texts.append(f"{stored.source} {stored.relation} {plan.target_name}: {plan.description}")
    if plan.target is None:
        texts.append(f"{plan.target_name} ({NEW_ENTITY_TYPE}): ")
    if not texts:
        return _Vectors()
    vectors = memory.embedder.embed(call, texts, deadline=deadline)
    return _Vectors(edge=vectors[0], entity=vectors[1] if plan.target is None else None)


def _stored_target(conn, stored: EdgeToCorrect, plan: _Plan, vector: list[float] | None) -> int:
    """The new fact's target id: the stored target, another entity planned (still there: a forget
    may have run between the plan and the dataset's lock), or the new entity, created."""
    if plan.target is not None:
        changed = plan.target.id != stored.target_id
        if changed and correction_rows.entity_by_id(conn, stored.dataset_id, plan.target.id) is None:
            raise Conflict(f"entity {plan.target.id} was forgotten meanwhile: correct the fact again")
        return plan.target.id
    [entity] = graph_writes.upsert_entities(
        conn,
        stored.dataset_id,
        [
            graph_writes.EntityRow(
                matched_id=None,
                name=plan.target_name,
                normalized_name=normalized_name(plan.target_name),
                type=NEW_ENTITY_TYPE,
                description="",
                embedding=vector,
            )
        ],
    )
    return entity.id


def _insert_artifact(conn, stored: EdgeToCorrect, correction: Correction, now: datetime) -> int:
    cursor = graph_writes.send_insert_artifacts(
        conn,
        stored.dataset_id,
        text=correction_record(stored, correction),
        session_id=None,
        reference_time=now,
        chunks=[],
        kind=ARTIFACT_KIND,
    )
    artifact_id, _chunks, _created_at = graph_writes.read_artifacts(cursor)
    return artifact_id


def correction_record(stored: EdgeToCorrect, correction: Correction) -> str:
    """The correction artifact's text: who asked, why, which fact, its values before and the changes."""
    changes = {
        "description": correction.description,
        "target": correction.target,
        "valid_at": rfc3339(correction.valid_at),
        "invalid_at": rfc3339(correction.invalid_at),
    }
    return json.dumps(
        {
            "requested_by": correction.user_id,
            "reason": correction.reason,
            "edge_id": stored.id,
            "previous": {
                "source": stored.source,
                "relation": stored.relation,
                "target": stored.target,
                "target_id": stored.target_id,
                "description": stored.description,
                "valid_at": rfc3339(stored.valid_at),
                "invalid_at": rfc3339(stored.invalid_at),
            },
            "changes": {name: value for name, value in changes.items() if value is not None},
        },
        ensure_ascii=False,
    )


def _link(conn, artifact_id: int, edge_id: int, source_id: int, target_id: int) -> None:
    graph_writes.link(
        conn,
        entity_artifacts=[(source_id, artifact_id), (target_id, artifact_id)],
        edge_artifacts=[(edge_id, artifact_id)],
        session_id=None,
        session_entities=[],
        session_edges=[],
    )
