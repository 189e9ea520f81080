"""A change of facts as a plan: what was read of the facts it touches (db/fact_history.py) and what
it states, turned into the writes the rule asks for (memory/history.py), before anything is
written. Remember (one text, or each text of a window), a correction and a restore plan through
here; the plan is pure, so each decision is tested without a database.

Entities are named by key: a stored entity by its id, one the change creates by its normalized
name (`NewEntity`), since its id is known only once it is stored; the edges the plan creates get
their ids when it is applied (`FactPlan.writes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg

from gligabao.db import fact_history as rows
from gligabao.memory import history
from gligabao.memory.history import (
    FOREVER,
    NEVER,
    SAID,
    Conflict,
    NewRow,
    NewStatement,
    RowKey,
    Statement,
)
from gligabao.model import StoredEdge

# A new statement and judgement is stored after every stored one (their order among statements
# said at the same instant).
NEW_SEQ = 2**62
# What cut a statement when the fact that cut it has been forgotten since.
FORGOTTEN = 0


@dataclass(frozen=True)
class NewEntity:
    """An entity the change creates, by its normalized name."""

    normalized_name: str


EntityKey = int | NewEntity
Fact = tuple[EntityKey, EntityKey, str]  # (source, target, relation)


@dataclass(frozen=True)
class NewFact:
    """What an edge the change creates for a fact holds: its sentence, vector, artifact, model."""

    description: str
    embedding: Sequence[float] | None
    artifact_id: int | None
    model_id: str | None = None


NO_FACT = NewFact("", None, None)


@dataclass(frozen=True)
class _Content:
    """What a new edge holds: a new fact's, or that of the edge it is a piece of (`copied_from`, a
    stored edge whose vector the database copies rather than send it back and forth)."""

    fact: NewFact
    copied_from: int | None = None


def fact_of(edge: rows.HistoryEdge) -> Fact:
    return (edge.source_id, edge.target_id, edge.relation)


def engine_history(seen: rows.History) -> history.History:
    """What was read, as the rule's engine takes it."""
    fact = {edge.id: fact_of(edge) for edge in seen.edges}
    engine = history.History()
    for edge in seen.edges:
        engine.rows[edge.id] = history.Row(
            edge.id, fact[edge.id], edge.valid_at, edge.invalid_at, edge.expired_at, edge.superseded_by
        )
    for s in seen.statements:
        if s.edge_id not in fact:
            continue
        engine.statements[s.id] = Statement(
            s.id,
            fact[s.edge_id],
            s.edge_id,
            s.valid_at,
            s.invalid_at,
            s.said_at,
            s.id,
            s.kind,
            ends_at=_ends_from_row(s),
            cut_by=(s.cut_by if s.cut_by is not None else FORGOTTEN) if s.cut else None,
            artifact_id=s.artifact_id,
        )
    stated = {s.edge_id for s in seen.statements}
    for edge in seen.edges:
        if edge.id not in stated:
            engine.statements[NewStatement(-edge.id)] = _implicit_statement(edge)
    for c in seen.conflicts:
        if c.edge_id in fact and c.other_edge_id in fact:
            engine.conflicts.append(
                Conflict(
                    frozenset((fact[c.edge_id], fact[c.other_edge_id])),
                    c.contradicts,
                    c.said_at,
                    c.id,
                    (c.edge_id, c.other_edge_id),
                )
            )
    return engine


def _implicit_statement(edge: rows.HistoryEdge) -> Statement:
    """The statement of an edge that has none (one the code before migration 0042 wrote, after it ran:
    a rollback of the code): its period as stored, said when it was stored; written once it changes."""
    valid_at, invalid_at = edge.valid_at, edge.invalid_at
    stated_end = (
        None if invalid_at is not None and valid_at is not None and invalid_at <= valid_at else invalid_at
    )
    ends_at = invalid_at if invalid_at is not None else FOREVER
    if valid_at is not None:
        ends_at = max(ends_at, valid_at)
    return Statement(
        NewStatement(-edge.id),
        fact_of(edge),
        edge.id,
        valid_at,
        stated_end,
        edge.created_at,
        0,
        ends_at=ends_at,
        cut_by=(edge.superseded_by if edge.superseded_by is not None else FORGOTTEN)
        if edge.expired_at
        else None,
        artifact_id=edge.artifact_id,
    )


def _ends_from_row(s: rows.StatementRow) -> datetime:
    """How far a stored statement holds: NULL is open, except for one of unknown start that was
    cut (only a correction cuts one to nothing)."""
    if s.ends_at is not None:
        return s.ends_at
    return NEVER if s.valid_at is None and s.cut else FOREVER


def _ends_to_row(ends_at: datetime) -> datetime | None:
    return None if ends_at in (FOREVER, NEVER) else ends_at


@dataclass
class FactPlan:
    """The settled history of the facts a change touched, and how to write it."""

    seen: rows.History
    settled: history.Settled
    new_facts: Mapping[NewRow, NewFact]
    now: datetime

    @property
    def new_rows(self) -> list[NewRow]:
        """The edges to create, in the order their ids are given."""
        return sorted((k for k in self.settled.history.rows if isinstance(k, NewRow)), key=lambda k: k.number)

    def row_of(self, statement: NewStatement) -> RowKey:
        return self.settled.history.statements[statement].row

    def writes(self, entity_ids: Mapping[EntityKey, int], edge_ids: Sequence[int]) -> rows.Writes:
        """The plan's writes, its entities and new edges named by their ids."""
        edge_id = dict(zip(self.new_rows, edge_ids, strict=True))

        def edge(key: RowKey | None) -> int | None:
            if key is None or key == FORGOTTEN:
                return None
            return edge_id[key] if isinstance(key, NewRow) else key

        def entity(key: EntityKey) -> int:
            return entity_ids[key] if isinstance(key, NewEntity) else key

        settled = self.settled.history
        new_edges, periods = [], []
        for key in self.settled.rows_changed:
            row = settled.rows[key]
            if isinstance(key, NewRow):
                source, target, relation = row.fact
                content = self._content(key)
                new_edges.append(
                    rows.NewEdge(
                        edge(key),
                        entity(source),
                        entity(target),
                        relation,
                        content.fact.description,
                        self._artifact(key, content),
                        content.fact.embedding,
                        content.fact.model_id,
                        row.valid_at,
                        row.invalid_at,
                        row.expired_at,
                        edge(row.superseded_by),
                        vector_of=content.copied_from,
                    )
                )
            else:
                periods.append(
                    rows.EdgePeriod(
                        key, row.valid_at, row.invalid_at, row.expired_at, edge(row.superseded_by)
                    )
                )
        statements, edge_artifacts = [], []
        stored = {s.id: s for s in self.seen.statements}
        for key in self.settled.statements_changed:
            s = settled.statements[key]
            statements.append(
                rows.StatementRow(
                    None if isinstance(key, NewStatement) else key,
                    edge(s.row),
                    s.artifact_id,
                    s.kind,
                    s.valid_at,
                    s.invalid_at,
                    s.said_at,
                    _ends_to_row(s.ends_at),
                    s.cut_by is not None,
                    edge(s.cut_by),
                )
            )
            moved = isinstance(key, int) and stored[key].edge_id != s.row
            if s.kind == SAID and s.artifact_id is not None and (moved or isinstance(key, NewStatement)):
                edge_artifacts.append((edge(s.row), s.artifact_id))
        conflicts = [
            rows.ConflictRow(edge(c.rows[0]), edge(c.rows[1]), c.contradicts, c.said_at)
            for c in settled.conflicts
            if c.seq >= NEW_SEQ
        ]
        return rows.Writes(new_edges, periods, statements, conflicts, edge_artifacts)

    def _content(self, key: NewRow) -> _Content:
        """What the new edge holds: its own new fact's, else (a piece split off another edge) that
        edge's, a stored one's as read or a new one's as planned."""
        like = self.settled.history.rows[key].like
        if like is None:
            return _Content(self.new_facts.get(key, NO_FACT))
        if isinstance(like, NewRow):
            return self._content(like)
        stored = self._seen_edge(like)
        return _Content(NewFact(stored.description, None, stored.artifact_id, stored.model_id), stored.id)

    def _artifact(self, key: NewRow, content: _Content) -> int | None:
        """The artifact that first stated the new edge, else its content's."""
        found = [
            s for s in self.settled.history.statements.values() if s.row == key and s.artifact_id is not None
        ]
        first = min(found, key=lambda s: (s.said_at, s.seq)).artifact_id if found else None
        return first if first is not None else content.fact.artifact_id

    def _seen_names(self) -> dict[EntityKey, str]:
        found: dict[EntityKey, str] = {}
        for edge in self.seen.edges:
            found.update({edge.source_id: edge.source, edge.target_id: edge.target})
        return found

    def _seen_edge(self, edge_id: int) -> rows.HistoryEdge:
        return next(e for e in self.seen.edges if e.id == edge_id)

    def stored_edge(
        self,
        key: RowKey,
        names: Mapping[EntityKey, str],
        entity_ids: Mapping[EntityKey, int],
        edge_ids: Sequence[int],
        created_at: datetime,
    ) -> StoredEdge:
        """The edge as the plan leaves it (a response's): with its endpoints' names, those of the
        edges read and `names` (the entities the change named)."""
        row = self.settled.history.rows[key]
        source, target, relation = row.fact
        if isinstance(key, NewRow):
            names = {**self._seen_names(), **names}
            content = self._content(key)
            return StoredEdge(
                id=dict(zip(self.new_rows, edge_ids, strict=True))[key],
                source_id=entity_ids[source] if isinstance(source, NewEntity) else source,
                target_id=entity_ids[target] if isinstance(target, NewEntity) else target,
                relation=relation,
                description=content.fact.description,
                artifact_id=self._artifact(key, content),
                valid_at=row.valid_at,
                invalid_at=row.invalid_at,
                created_at=created_at,
                expired_at=row.expired_at,
                source=names[source],
                target=names[target],
                created=True,
                model_id=content.fact.model_id,
            )
        seen = self._seen_edge(key)
        return StoredEdge(
            id=key,
            source_id=seen.source_id,
            target_id=seen.target_id,
            relation=seen.relation,
            description=seen.description,
            artifact_id=seen.artifact_id,
            valid_at=row.valid_at,
            invalid_at=row.invalid_at,
            created_at=seen.created_at,
            expired_at=row.expired_at,
            source=seen.source,
            target=seen.target,
            created=False,
            model_id=seen.model_id,
        )


def plan_change(
    seen: rows.History,
    statements: Sequence[Statement],
    conflicts: Sequence[Conflict],
    new_facts: Mapping[NewRow, NewFact],
    now: datetime,
    *,
    rederive: Sequence[Fact] = (),
) -> FactPlan:
    """The plan of a change's statements and judgements against what was read; `rederive`: facts
    whose edges are derived again from their statements as they are (a forget removed some)."""
    settled = history.settle(engine_history(seen), statements, conflicts, now, rederive=rederive)
    return FactPlan(seen, settled, new_facts, now)


def statement(
    number: int,
    fact: Fact,
    row: RowKey,
    valid_at: datetime | None,
    invalid_at: datetime | None,
    said_at: datetime,
    *,
    artifact_id: int | None,
    kind: str = SAID,
    cut_by: RowKey | None = None,
) -> Statement:
    """A statement the change makes (stored after every stored one)."""
    return Statement(
        NewStatement(number),
        fact,
        row,
        valid_at,
        invalid_at,
        said_at,
        NEW_SEQ,
        kind,
        cut_by=cut_by,
        artifact_id=artifact_id,
    )


def judgement(
    facts: tuple[Fact, Fact],
    rows_judged: tuple[RowKey, RowKey],
    said_at: datetime,
    *,
    contradicts: bool = True,
) -> Conflict:
    """A judgement the change makes about two facts (stored after every stored one)."""
    return Conflict(frozenset(facts), contradicts, said_at, NEW_SEQ, rows_judged)


def apply_plan(
    conn: psycopg.Connection,
    dataset_id: int,
    plan: FactPlan,
    entity_ids: Mapping[EntityKey, int] | None = None,
) -> list[int]:
    """Write the plan in the caller's transaction (its dataset locked); the ids of its new edges.
    One round trip for the ids when it creates edges; the writes travel with the next one."""
    edge_ids = []
    if plan.new_rows:
        edge_ids = [row["id"] for row in rows.send_new_edge_ids(conn, len(plan.new_rows)).fetchall()]
    rows.send_apply(conn, dataset_id, plan.writes(entity_ids or {}, edge_ids))
    return edge_ids
