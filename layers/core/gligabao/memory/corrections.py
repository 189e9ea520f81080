"""Correcting and restoring a fact by hand (PATCH /v1/gb/edges/{id}, POST /v1/gb/edges/{id}/restore):
no extraction, no resolve stage; the history's rule (memory/history.py) as for any text, said at
the time of the correction.

- A correction of the description, target, relation or period replaces the fact: the corrected
  edge's statements end where its period began (it is kept superseded, emptied, `superseded_by`
  the new edge), and the new edge, with the values the caller changed, is stated by an artifact of
  kind 'correction' whose text records, as JSON, who asked, why, the fact corrected and its
  previous values. A new target or relation with no new description gets a sentence that names the
  new ends ("Alice works at Initech."), made without a model call. The new fact contradicts the
  one it replaces and what that one contradicted; a statement of the old fact said before the
  correction that arrives later ends where the corrected period began.
- A correction that only sets `invalid_at` ends the fact then, without a replacement: a statement
  of the same fact said now that ends there (it closes the stored one, which stays live).
- A restore makes a superseded fact hold again: a statement of it said now over the period its
  statements gave; with `superseder: "end"` the fact that superseded it ends where it begins (the
  rule, as a later text would), with `"keep"` the two are judged not to contradict and both hold.

The one model call a correction may make is one embeddings request: the new fact's vector when its
description, target or relation changes, and the new target entity's when the name is not in the
dataset (created as type 'unknown', as extraction does for a name no entity lists). A restore makes
none.

An edge another user owns is NotFound, the same answer as an edge that does not exist; correcting an
edge already superseded is a Conflict (correct the fact that superseded it, or restore it), and so
is restoring a live one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from gligabao.db import corrections as correction_rows
from gligabao.db import fact_history as history_rows
from gligabao.db import forget as forget_rows
from gligabao.db import graph_writes
from gligabao.db.corrections import EdgeToCorrect, NamedEntity
from gligabao.errors import BadRequest, Conflict, NotFound
from gligabao.memory import fact_plan
from gligabao.memory.extraction import relation_name
from gligabao.memory.fact_plan import Fact, FactPlan, NewFact
from gligabao.memory.history import CORRECTION, NewRow, contradicting
from gligabao.memory.names import normalized_name
from gligabao.memory.operation import operation
from gligabao.memory.ports import Memory
from gligabao.model import EndedEdge, StoredEdge
from gligabao.observability.inferences import save_inferences
from gligabao.timefmt import rfc3339

ARTIFACT_KIND = "correction"
NEW_ENTITY_TYPE = "unknown"  # a target named for the first time, as extraction types an unlisted name
_NEW = NewRow(1)  # the edge a correction states


@dataclass(frozen=True)
class Correction:
    """What the caller changes of one fact; None leaves a value as stored."""

    user_id: str
    edge_id: int
    description: str | None = None
    target: str | int | None = None  # an entity's name (created when the dataset has none) or id
    relation: str | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    reason: str | None = None  # why, in the caller's words: kept in the correction artifact

    @property
    def ends_only(self) -> bool:
        return (
            self.invalid_at is not None
            and self.description is None
            and self.target is None
            and self.relation is None
            and self.valid_at is None
        )


@dataclass(frozen=True)
class Restore:
    user_id: str
    edge_id: int
    superseder: Literal["end", "keep"]  # what becomes of the fact that superseded the one restored
    reason: str | None = None


@dataclass(frozen=True)
class Corrected:
    """The fact as it now stands, the fact it superseded (none when only ended), the artifact."""

    edge: StoredEdge
    superseded: EndedEdge | None
    artifact_id: int


@dataclass(frozen=True)
class Restored:
    """The fact restored and the one that had superseded it, as they now stand; the artifact."""

    edge: StoredEdge
    superseder: StoredEdge | None
    artifact_id: int


@dataclass(frozen=True)
class _Values:
    """The new fact, decided before anything is written."""

    target: NamedEntity | None  # None: a new entity named `target_name`
    target_name: str
    relation: str
    description: str
    valid_at: datetime | None
    invalid_at: datetime | None

    def ends_changed(self, stored: EdgeToCorrect) -> bool:
        return self.target is None or self.target.id != stored.target_id or self.relation != stored.relation

    def changes(self, stored: EdgeToCorrect) -> bool:
        return (
            self.ends_changed(stored)
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
        values = _values(uow.conn, stored, correction, memory.limits.entity_name_max_chars)
    with operation(
        memory,
        "remember",
        user_id=correction.user_id,
        dataset=stored.dataset,
        session_id=None,
        request_id=request_id,
    ) as op:
        op.call.dataset_id = stored.dataset_id
        vectors = _vectors(memory, op.call, stored, values, deadline)
        with memory.database.transaction(correction.user_id, pipeline=True) as uow:
            # The dataset's lock (remember's and forget's), then the edge as it is now: a correction
            # that ran at the same moment may have superseded it first.
            forget_rows.lock_dataset_of_edge(uow.conn, correction.user_id, correction.edge_id)
            stored = _live_edge(
                correction_rows.edge_to_correct(uow.conn, correction.user_id, correction.edge_id)
            )
            corrected = _replace(uow.conn, stored, correction, values, vectors, memory.clock())
            save_inferences(uow.conn, op.call)
    return corrected


def _replace(
    conn, stored: EdgeToCorrect, correction: Correction, values: _Values, vectors: _Vectors, now: datetime
) -> Corrected:
    """The writes of a correction, under the dataset's lock: the artifact and the new target when
    it is new, with the read of the facts' history (one round trip), then the plan: the correction
    of the old fact, the statement of the new one."""
    target_id = _stored_target(conn, stored, values, vectors.entity)
    old: Fact = (stored.source_id, stored.target_id, stored.relation)
    new: Fact = (stored.source_id, target_id, values.relation)
    artifact_id, seen = _artifact_and_history(
        conn, stored, correction_record(stored, correction), [old, new], now
    )
    statements = [
        fact_plan.statement(
            0, old, stored.id, stored.valid_at, stored.invalid_at, now,
            artifact_id=artifact_id, kind=CORRECTION, cut_by=_NEW,
        ),
        fact_plan.statement(1, new, _NEW, values.valid_at, values.invalid_at, now, artifact_id=artifact_id),
    ]  # fmt: skip
    conflicts = [] if new == old else _replacement_judgements(seen, old, new, stored.id, now)
    embedding = vectors.edge if vectors.edge is not None else stored.embedding
    plan = fact_plan.plan_change(
        seen, statements, conflicts, {_NEW: NewFact(values.description, embedding, artifact_id)}, now
    )
    edge, _ = _apply(conn, plan, statements[1], stored, values.target_name, target_id, artifact_id)
    return Corrected(edge=edge, superseded=_ended(plan, stored.id), artifact_id=artifact_id)


def _replacement_judgements(seen, old: Fact, new: Fact, old_id: int, now: datetime) -> list:
    """The new fact contradicts the one it replaces, and every fact that one contradicts."""
    judged = [fact_plan.judgement((new, old), (_NEW, old_id), now)]
    engine = fact_plan.engine_history(seen)
    relation = contradicting(engine.conflicts)
    for facts, contradicts in relation.items():
        if contradicts and old in facts:
            (other,) = facts - {old} or {old}
            if other != new:
                row = next(key for key, r in engine.rows.items() if r.fact == other)
                judged.append(fact_plan.judgement((new, other), (_NEW, row), now))
    return judged


def _end(memory: Memory, correction: Correction) -> Corrected:
    """Only `invalid_at`: a statement of the same fact said now, ending then (it closes the stored
    one, not superseded); no model call."""
    with memory.database.transaction(correction.user_id, pipeline=True) as uow:
        forget_rows.lock_dataset_of_edge(uow.conn, correction.user_id, correction.edge_id)
        stored = _live_edge(correction_rows.edge_to_correct(uow.conn, correction.user_id, correction.edge_id))
        _check_period(stored.valid_at, correction.invalid_at)
        if correction.invalid_at == stored.invalid_at:
            raise BadRequest("the correction changes nothing: the fact already ends then")
        now = memory.clock()
        fact: Fact = (stored.source_id, stored.target_id, stored.relation)
        record = correction_record(stored, correction)
        artifact_id, seen = _artifact_and_history(uow.conn, stored, record, [fact], now)
        closer = fact_plan.statement(
            0, fact, stored.id, stored.valid_at, correction.invalid_at, now, artifact_id=artifact_id
        )
        plan = fact_plan.plan_change(seen, [closer], [], {}, now)
        edge, _ = _apply(uow.conn, plan, closer, stored, stored.target, stored.target_id, artifact_id)
    return Corrected(edge=edge, superseded=None, artifact_id=artifact_id)


def restore(memory: Memory, request: Restore) -> Restored:
    """Make a superseded fact hold again over the period its statements gave (no model call)."""
    with memory.database.transaction(request.user_id, pipeline=True) as uow:
        forget_rows.lock_dataset_of_edge(uow.conn, request.user_id, request.edge_id)
        stored = correction_rows.edge_to_correct(uow.conn, request.user_id, request.edge_id)
        if stored is None:
            raise NotFound("edge not found")
        if stored.expired_at is None:
            raise Conflict(f"edge {stored.id} is not superseded: only a superseded fact can be restored")
        now = memory.clock()
        fact: Fact = (stored.source_id, stored.target_id, stored.relation)
        artifact_id, seen = _artifact_and_history(
            uow.conn, stored, restore_record(stored, request), [fact], now
        )
        superseder = next((e for e in seen.edges if e.id == stored.superseded_by), None)
        valid_at, invalid_at = _stated_period(seen, stored)
        statement = fact_plan.statement(
            0, fact, stored.id, valid_at, invalid_at, now, artifact_id=artifact_id
        )
        conflicts = []
        if request.superseder == "keep" and superseder is not None:
            conflicts.append(
                fact_plan.judgement(
                    (fact, fact_plan.fact_of(superseder)), (stored.id, superseder.id), now, contradicts=False
                )
            )
        plan = fact_plan.plan_change(seen, [statement], conflicts, {}, now)
        edge, edge_ids = _apply(
            uow.conn, plan, statement, stored, stored.target, stored.target_id, artifact_id
        )
        after = None
        if superseder is not None:  # a stored edge: the plan has its names
            after = plan.stored_edge(superseder.id, {}, {}, edge_ids, superseder.created_at)
    return Restored(edge=edge, superseder=after, artifact_id=artifact_id)


def _artifact_and_history(
    conn, stored: EdgeToCorrect, record: str, facts: list[Fact], now: datetime
) -> tuple[int, history_rows.History]:
    """The change's artifact, inserted, and the history of `facts` and of the edge: one round trip."""
    artifact = _send_artifact(conn, stored, record, now)
    history = history_rows.send_history(conn, stored.dataset_id, facts, [stored.id])
    return _artifact_id(artifact), history_rows.read_history(history.fetchone())


def _apply(
    conn, plan: FactPlan, statement, stored: EdgeToCorrect, target_name: str, target_id: int, artifact_id: int
) -> tuple[StoredEdge, list[int]]:
    """Write the plan and the artifact's entities; (the edge `statement` now belongs to, as it
    stands; the ids of the plan's new edges)."""
    edge_ids = fact_plan.apply_plan(conn, stored.dataset_id, plan)
    edge = _stated_edge(plan, plan.row_of(statement.key), stored, target_name, target_id, edge_ids)
    _link(conn, artifact_id, stored.source_id, target_id)
    return edge, edge_ids


def _stated_period(
    seen: history_rows.History, stored: EdgeToCorrect
) -> tuple[datetime | None, datetime | None]:
    """The period the edge's statements gave: from the earliest start they gave to the latest end
    (open when one of them gave none); the edge's own when it has none."""
    said = [s for s in seen.statements if s.edge_id == stored.id and s.kind == "said"]
    starts = [s.valid_at for s in said if s.valid_at is not None]
    if not said:
        return stored.valid_at, None
    ends = [s.invalid_at for s in said]
    invalid_at = (
        None if starts and any(end is None for end in ends) else max((e for e in ends if e), default=None)
    )
    return (min(starts) if starts else None), invalid_at


def _ended(plan: FactPlan, edge_id: int) -> EndedEdge | None:
    row = plan.settled.history.rows.get(edge_id)
    if row is None or edge_id not in plan.settled.newly_superseded or row.invalid_at is None:
        return None
    return EndedEdge(edge_id, row.invalid_at, row.expired_at)


def _stated_edge(
    plan: FactPlan, row, stored: EdgeToCorrect, target_name: str, target_id: int, edge_ids: list[int]
) -> StoredEdge:
    names = {stored.source_id: stored.source, stored.target_id: stored.target, target_id: target_name}
    created_at = next((e.created_at for e in plan.seen.edges if e.id == row), plan.now)
    return plan.stored_edge(row, names, {}, edge_ids, created_at)


def _live_edge(stored: EdgeToCorrect | None) -> EdgeToCorrect:
    if stored is None:
        raise NotFound("edge not found")
    if stored.expired_at is not None:
        raise Conflict(
            f"edge {stored.id} was superseded at {rfc3339(stored.expired_at)}: only a live fact can be "
            "corrected (correct the fact that superseded it, or restore this one)"
        )
    return stored


def _values(conn, stored: EdgeToCorrect, correction: Correction, name_max_chars: int) -> _Values:
    target, target_name = _target(conn, stored, correction.target, name_max_chars)
    relation = relation_name(correction.relation) if correction.relation is not None else stored.relation
    ends_changed = target is None or target.id != stored.target_id or relation != stored.relation
    description = correction.description
    if description is None:
        description = sentence(stored.source, relation, target_name) if ends_changed else stored.description
    values = _Values(
        target=target,
        target_name=target_name,
        relation=relation,
        description=description,
        valid_at=correction.valid_at if correction.valid_at is not None else stored.valid_at,
        invalid_at=correction.invalid_at if correction.invalid_at is not None else stored.invalid_at,
    )
    _check_period(values.valid_at, values.invalid_at)
    if not values.changes(stored):
        raise BadRequest("the correction changes nothing: every value given is the fact's already")
    return values


def sentence(source: str, relation: str, target: str) -> str:
    """A fact's sentence from its ends, without a model: 'Alice works at Initech.'"""
    return f"{source} {relation.replace('_', ' ')} {target}."


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


def _vectors(
    memory: Memory, call, stored: EdgeToCorrect, values: _Values, deadline: float | None
) -> _Vectors:
    """The vectors a correction needs, in one embeddings request: the new fact's when its
    description, target or relation changes, the new target entity's when it is new; none otherwise."""
    texts: list[str] = []
    fact_changed = values.description != stored.description or values.ends_changed(stored)
    if fact_changed:
        texts.append(f"{stored.source} {values.relation} {values.target_name}: {values.description}")
    if values.target is None:
        texts.append(f"{values.target_name} ({NEW_ENTITY_TYPE}): ")
    if not texts:
        return _Vectors()
    vectors = memory.embedder.embed(call, texts, deadline=deadline)
    edge = vectors[0] if fact_changed else None
    return _Vectors(edge=edge, entity=vectors[-1] if values.target is None else None)


def _stored_target(conn, stored: EdgeToCorrect, values: _Values, vector: list[float] | None) -> int:
    """The new fact's target id: the stored target, another entity planned (still there: a forget
    may have run between the plan and the dataset's lock), or the new entity, created."""
    if values.target is not None:
        changed = values.target.id != stored.target_id
        if changed and correction_rows.entity_by_id(conn, stored.dataset_id, values.target.id) is None:
            raise Conflict(f"entity {values.target.id} was forgotten meanwhile: correct the fact again")
        return values.target.id
    [entity] = graph_writes.upsert_entities(
        conn,
        stored.dataset_id,
        [
            graph_writes.EntityRow(
                matched_id=None,
                name=values.target_name,
                normalized_name=normalized_name(values.target_name),
                type=NEW_ENTITY_TYPE,
                description="",
                embedding=vector,
            )
        ],
    )
    return entity.id


def _send_artifact(conn, stored: EdgeToCorrect, record: str, now: datetime):
    """The correction's artifact, its id read later (`_artifact_id`)."""
    return graph_writes.send_insert_artifacts(
        conn,
        stored.dataset_id,
        text=record,
        session_id=None,
        reference_time=now,
        chunks=[],
        kind=ARTIFACT_KIND,
    )


def _artifact_id(cursor) -> int:
    artifact_id, _chunks, _created_at = graph_writes.read_artifacts(cursor)
    return artifact_id


def _previous(stored: EdgeToCorrect) -> dict:
    return {
        "source": stored.source,
        "relation": stored.relation,
        "target": stored.target,
        "target_id": stored.target_id,
        "description": stored.description,
        "valid_at": rfc3339(stored.valid_at),
        "invalid_at": rfc3339(stored.invalid_at),
    }


def correction_record(stored: EdgeToCorrect, correction: Correction) -> str:
    """The correction artifact's text: who asked, why, which fact, its values before and the changes."""
    changes = {
        "description": correction.description,
        "target": correction.target,
        "relation": correction.relation,
        "valid_at": rfc3339(correction.valid_at),
        "invalid_at": rfc3339(correction.invalid_at),
    }
    return json.dumps(
        {
            "requested_by": correction.user_id,
            "reason": correction.reason,
            "edge_id": stored.id,
            "previous": _previous(stored),
            "changes": {name: value for name, value in changes.items() if value is not None},
        },
        ensure_ascii=False,
    )


def restore_record(stored: EdgeToCorrect, request: Restore) -> str:
    """The restore's artifact text: who asked, why, which fact, what had superseded it and when."""
    return json.dumps(
        {
            "requested_by": request.user_id,
            "reason": request.reason,
            "edge_id": stored.id,
            "restore": {
                "superseder": request.superseder,
                "superseded_by": stored.superseded_by,
                "expired_at": rfc3339(stored.expired_at),
            },
            "previous": _previous(stored),
        },
        ensure_ascii=False,
    )


def _link(conn, artifact_id: int, source_id: int, target_id: int) -> None:
    """The artifact's entities (its edge's provenance is its statement's, written with the plan)."""
    graph_writes.link(
        conn,
        entity_artifacts=[(source_id, artifact_id), (target_id, artifact_id)],
        session_id=None,
        session_entities=[],
        session_edges=[],
    )
