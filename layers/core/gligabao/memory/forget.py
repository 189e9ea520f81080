"""Forget (SPEC section 13): delete an artifact, an entity or an edge of a user, and what only it
held, so that no search can return it again (vectors are columns of the rows they embed).

- An artifact: the text (or image) and its chunks; the edges no other artifact supports; the
  entities no other artifact mentions and no remaining edge touches. What another artifact also
  supports stays: its provenance links to the forgotten artifacts go, and an edge the forgotten
  text first stated names instead the first stored (lowest id) of its remaining artifacts.
- An entity: the entity and every edge touching it, live or superseded.
- An edge: the edge alone.

After each, an entity the forget touched stays only while an artifact mentions it or an edge
touches it. Links (provenance, sessions) go with their rows, and what the forgotten text said of a
fact that stays goes too: the fact's period is derived again from what the other texts said
(memory/history.py). A fact the forgotten text superseded or ended stays so: forget deletes, it
never revives.

An id the user does not own is NotFound, the same answer as an id that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from gligabao.db import fact_history as history_rows
from gligabao.db import forget as forget_rows
from gligabao.errors import Conflict, NotFound
from gligabao.memory import fact_plan
from gligabao.memory.ports import Memory


@dataclass(frozen=True)
class Forgotten:
    """The rows one forget deleted."""

    artifacts: int  # texts and images
    chunks: int
    entities: int
    edges: int


def forget_artifact(memory: Memory, user_id: str, artifact_id: int) -> Forgotten:
    """Forget a remembered text (or image): a chunk is forgotten with its text, never alone."""
    with memory.database.transaction(user_id) as uow:
        owner = forget_rows.lock_dataset_of_artifact(uow.conn, user_id, artifact_id)
        if owner is None:
            raise NotFound(f"artifact {artifact_id} not found")
        if owner.parent_id is not None:
            raise Conflict(
                f"artifact {artifact_id} is chunk {owner.chunk_index} of artifact {owner.parent_id}: "
                f"forget artifact {owner.parent_id}"
            )
        deleted = forget_rows.delete_artifact(uow.conn, owner.dataset_id, artifact_id)
        if deleted.kept_edges:
            _rederive(uow.conn, owner.dataset_id, deleted.kept_edges, memory.clock())
        return _forgotten(deleted, "artifact", artifact_id)


def _rederive(conn, dataset_id: int, edge_ids: list[int], now) -> None:
    """The facts of the edges that lost the forgotten text's statements, derived again from the
    statements left (the cuts those made stay: no new statement, no new judgement)."""
    seen = history_rows.read_history(history_rows.send_history(conn, dataset_id, [], edge_ids).fetchone())
    kept = set(edge_ids)
    facts = sorted({fact_plan.fact_of(e) for e in seen.edges if e.id in kept})
    fact_plan.apply_plan(conn, dataset_id, fact_plan.plan_change(seen, [], [], {}, now, rederive=facts))


def forget_entity(memory: Memory, user_id: str, entity_id: int) -> Forgotten:
    with memory.database.transaction(user_id) as uow:
        dataset_id = forget_rows.lock_dataset_of_entity(uow.conn, user_id, entity_id)
        if dataset_id is None:
            raise NotFound(f"entity {entity_id} not found")
        return _forgotten(forget_rows.delete_entity(uow.conn, dataset_id, entity_id), "entity", entity_id)


def forget_edge(memory: Memory, user_id: str, edge_id: int) -> Forgotten:
    with memory.database.transaction(user_id) as uow:
        dataset_id = forget_rows.lock_dataset_of_edge(uow.conn, user_id, edge_id)
        if dataset_id is None:
            raise NotFound(f"edge {edge_id} not found")
        return _forgotten(forget_rows.delete_edge(uow.conn, dataset_id, edge_id), "edge", edge_id)


def _forgotten(deleted: forget_rows.DeletedRows, kind: str, row_id: int) -> Forgotten:
    # Not found under the lock: a forget that ran at the same moment deleted it first.
    if not deleted.found:
        raise NotFound(f"{kind} {row_id} not found")
    return Forgotten(deleted.artifacts, deleted.chunks, deleted.entities, deleted.edges)
