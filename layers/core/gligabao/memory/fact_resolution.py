"""Step 6 of remember: which facts of the text restate, repeat or contradict stored ones, and the
plan of what the text's facts change (memory/history.py's rule).

- A fact whose source, relation and target are a stored fact's restates it (no LLM), whatever that
  fact's state: it adds to that fact's history, and the judgements stored about that fact (which
  facts contradict it) apply to it.
- The other (new) facts are compared by the `resolve` stage, in one call per text, with the
  candidates: the live edges around their entities, the edges of their source's relation (live or
  not: a fact said before a stored one may contradict a superseded one) and the live edges whose
  vector has a cosine of at least `fact_candidate_similarity` with one of them, at most
  `max_fact_candidates`. No candidate, no call.
- A duplicate joins the history of the fact it repeats. A contradiction is a judgement about two
  facts, stored, that the rule applies in both directions: the one said later holds where their
  periods overlap.

The LLM is asked before the store's transaction (no lock is held during a model call). The store
reads the history again under the dataset's lock and plans from it (`plan_facts`, pure): a
decision about an edge gone in the meantime is dropped, and a fact that became a restatement is
one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

from gligabao.ai.prompts.resolve import RESOLVE_MAX_TOKENS, FactLine, Resolution, resolve_prompt
from gligabao.ai.stages import level_for
from gligabao.db import fact_history as history_rows
from gligabao.db import graph_writes
from gligabao.limits import Limits
from gligabao.memory import fact_plan
from gligabao.memory.extraction import TextFact, TextGraph
from gligabao.memory.fact_plan import EntityKey, Fact, FactPlan, NewEntity, NewFact
from gligabao.memory.history import NewRow, RowKey
from gligabao.model import EndedEdge, StoredEdge
from gligabao.observability.inferences import CallContext


@dataclass
class Judgement:
    """What the resolve stage said, by index of the fact in the text's graph."""

    duplicate_of: dict[int, int] = field(default_factory=dict)
    contradicts: dict[int, set[int]] = field(default_factory=dict)

    def edge_ids(self) -> set[int]:
        return set(self.duplicate_of.values()).union(*self.contradicts.values())


@dataclass(frozen=True)
class Candidates:
    new_facts: list[int]  # indexes of the facts that restate no stored fact
    edges: list[StoredEdge]  # the edges they may repeat or contradict


def find_candidates(
    conn: psycopg.Connection,
    dataset_id: int,
    graph: TextGraph,
    entity_vectors: Sequence[Sequence[float]],
    fact_vectors: Sequence[Sequence[float]],
    limits: Limits,
    *,
    restated_too: bool = False,
) -> Callable[[], Candidates]:
    """The facts the resolve stage must judge and the edges to judge them against (reads only).
    Two round trips: the known entities with the edges of the facts the text restates, then the
    candidates, whose statement is only sent: the returned function reads them, after the
    transaction's end in pipeline mode (so that they share the round trip of its COMMIT).
    `restated_too`: every fact is judged, restatement or not, against every candidate (a window
    of texts: what is a new fact now may be a restatement when its text's turn comes)."""
    matches, stored = graph_writes.known_entities_and_fact_edges(
        conn,
        dataset_id,
        [e.normalized_name for e in graph.entities],
        entity_vectors,
        limits.entity_match_similarity,
        fact_ends(graph),
        limits.entity_name_guard,
        exact_max=limits.exact_scan_max_rows,
        walk=limits.hnsw_candidates,
    )
    known = {
        entity.normalized_name: match for entity, match in zip(graph.entities, matches, strict=True) if match
    }
    stored_facts = {(e.source_id, e.target_id, e.relation) for e in stored}
    restated = (
        set()
        if restated_too
        else {
            index
            for index, f in enumerate(graph.facts)
            if (known.get(f.source.normalized_name), known.get(f.target.normalized_name), f.relation)
            in stored_facts
        }
    )
    new_facts = [index for index in range(len(graph.facts)) if index not in restated]
    if not new_facts:
        return lambda: Candidates([], [])
    around = {
        known[name]
        for i in new_facts
        for name in (graph.facts[i].source.normalized_name, graph.facts[i].target.normalized_name)
        if name in known
    }
    slots = sorted(
        {
            (known[graph.facts[i].source.normalized_name], graph.facts[i].relation)
            for i in new_facts
            if graph.facts[i].source.normalized_name in known
        }
    )
    restated_ids = sorted(
        {
            e.id
            for e in stored
            for i in restated
            if _fact_key(graph.facts[i], known) == (e.source_id, e.target_id, e.relation)
        }
    )
    edges = graph_writes.send_candidate_edges(
        conn,
        dataset_id,
        sorted(around),
        [fact_vectors[i] for i in new_facts],
        threshold=limits.fact_candidate_similarity,
        limit=limits.max_fact_candidates,
        per_entity=limits.fact_candidates_per_entity,
        exact_max=limits.exact_scan_max_rows,
        exclude_ids=restated_ids,
        slots=slots,
    )
    return lambda: Candidates(new_facts, edges.fetchall())


def fact_ends(graph: TextGraph) -> list[tuple[int, int, str]]:
    """Each fact as (source, target, relation), its ends as positions among the text's entities (as
    the reads of db/graph_writes.py take them)."""
    position: dict[str, int] = {}
    for index, entity in enumerate(graph.entities):
        position.setdefault(entity.normalized_name, index)
    return [
        (position[f.source.normalized_name], position[f.target.normalized_name], f.relation)
        for f in graph.facts
    ]


def _fact_key(fact: TextFact, known: Mapping[str, int]) -> tuple:
    return (known.get(fact.source.normalized_name), known.get(fact.target.normalized_name), fact.relation)


def judge(
    llm,
    call: CallContext,
    graph: TextGraph,
    candidates: Candidates,
    *,
    reference_time: datetime,
    now: datetime,
    reasoning: dict[str, str],
    models: dict[str, str],
    deadline: float | None = None,
) -> Judgement:
    """The resolve stage's decisions; no call when there is nothing to compare."""
    if not candidates.new_facts or not candidates.edges:
        return Judgement()
    system, content = resolve_prompt(
        [
            FactLine(i, f.source.name, f.relation, f.target.name, f.description, f.valid_at, f.invalid_at)
            for i in candidates.new_facts
            for f in (graph.facts[i],)
        ],
        [
            FactLine(e.id, e.source, e.relation, e.target, e.description, e.valid_at, e.invalid_at)
            for e in candidates.edges
        ],
        reference_time=reference_time,
        current_time=now,
    )
    reply = llm.complete(
        call,
        "resolve",
        system=system,
        content=content,
        reply_model=Resolution,
        reasoning=level_for(reasoning, "resolve"),
        model=models.get("resolve"),
        max_tokens=RESOLVE_MAX_TOKENS,
        deadline=deadline,
    )
    return judgement_from(reply, candidates)


def judgement_from(reply: Resolution, candidates: Candidates) -> Judgement:
    """The reply's decisions about the facts asked and the edges shown; anything else is ignored."""
    asked = set(candidates.new_facts)
    shown = {edge.id for edge in candidates.edges}
    judgement = Judgement()
    for decision in reply.facts:
        if decision.fact not in asked:
            continue
        if decision.duplicate_of in shown:
            judgement.duplicate_of[decision.fact] = decision.duplicate_of
        contradicted = {edge_id for edge_id in decision.contradicts if edge_id in shown}
        contradicted.discard(judgement.duplicate_of.get(decision.fact))
        if contradicted:
            judgement.contradicts.setdefault(decision.fact, set()).update(contradicted)
    return judgement


@dataclass
class FactsPlan:
    """What a text's facts change: the plan, and which of its edges each fact of the text is."""

    plan: FactPlan
    row_of_fact: list[RowKey]  # by index of the fact in the text's graph
    stated: list[RowKey]  # the edges the text states, each once, in the order it states them

    @property
    def new_edges(self) -> int:
        return len(self.plan.new_rows)

    def superseded(self) -> list[EndedEdge]:
        """The stored edges the text superseded (an edge it created superseded is one of its own)."""
        settled = self.plan.settled.history.rows
        return sorted(
            (
                EndedEdge(key, settled[key].invalid_at, settled[key].expired_at)
                for key in self.plan.settled.newly_superseded
                if isinstance(key, int) and settled[key].invalid_at is not None
            ),
            key=lambda e: e.id,
        )


def entity_keys(graph: TextGraph, matches: Sequence[int | None]) -> dict[str, EntityKey]:
    """Each entity of the text, by normalized name: the stored entity it is, else a new one."""
    return {
        entity.normalized_name: match if match is not None else NewEntity(entity.normalized_name)
        for entity, match in zip(graph.entities, matches, strict=True)
    }


def plan_facts(
    graph: TextGraph,
    keys: Mapping[str, EntityKey],
    fact_vectors: Sequence[Sequence[float]],
    judgement: Judgement,
    seen: history_rows.History,
    *,
    said_at: datetime,
    now: datetime,
    piece_artifacts: Sequence[int],
    model_id: str | None = None,
) -> FactsPlan:
    """The plan of the text's facts against their history (read under the dataset's lock): pure.

    The facts on one (source, relation, target) are one fact of the text (two names of one entity
    state one fact), stated once for each period they give and each piece (the text, or each chunk)
    that says it. A fact of a stored fact restates it; else a duplicate the resolve stage found joins
    the fact it repeats; else it is a new fact, and the contradictions found are judgements about it."""
    stored_facts = {fact_plan.fact_of(e) for e in seen.edges}
    seen_edges = {e.id: e for e in seen.edges}
    groups: dict[Fact, list[int]] = {}
    for index, fact in enumerate(graph.facts):
        triple = (keys[fact.source.normalized_name], keys[fact.target.normalized_name], fact.relation)
        groups.setdefault(triple, []).append(index)
    statements, conflicts, new_facts = [], [], {}
    first_statement: dict[int, int] = {}
    for number, (triple, members) in enumerate(groups.items()):
        row = NewRow(number + 1)
        fact = _fact_of_group(triple, members, judgement, stored_facts, seen_edges)
        head = graph.facts[members[0]]
        pieces = sorted({piece for i in members for piece in graph.facts[i].pieces})
        new_facts[row] = NewFact(
            head.description, fact_vectors[members[0]], piece_artifacts[pieces[0]], model_id
        )
        periods = dict.fromkeys((graph.facts[i].valid_at, graph.facts[i].invalid_at) for i in members)
        first_statement[number] = len(statements)
        for valid_at, invalid_at in periods:
            for piece in pieces:
                statements.append(
                    fact_plan.statement(
                        len(statements),
                        fact,
                        row,
                        valid_at,
                        invalid_at,
                        said_at,
                        artifact_id=piece_artifacts[piece],
                    )
                )
        if triple in stored_facts:
            continue  # a restatement: the stored judgements about its fact are what counts
        contradicted = {j for i in members for j in judgement.contradicts.get(i, ())}
        for edge_id in sorted(contradicted):
            edge = seen_edges.get(edge_id)
            if edge is not None and fact_plan.fact_of(edge) != fact:
                conflicts.append(
                    fact_plan.judgement((fact, fact_plan.fact_of(edge)), (row, edge_id), said_at)
                )
    plan = fact_plan.plan_change(seen, statements, conflicts, new_facts, now)
    row_of_group = [plan.row_of(statements[first_statement[n]].key) for n in range(len(groups))]
    row_of_fact = [0] * len(graph.facts)
    for number, members in enumerate(groups.values()):
        for index in members:
            row_of_fact[index] = row_of_group[number]
    return FactsPlan(plan, row_of_fact, list(dict.fromkeys(row_of_group)))


def _fact_of_group(
    triple: Fact,
    members: Sequence[int],
    judgement: Judgement,
    stored_facts: set[Fact],
    seen_edges: Mapping[int, history_rows.HistoryEdge],
) -> Fact:
    """The fact a group of the text's facts states: its own when stored (a restatement), else the
    fact of the stored edge the resolve stage found it repeats, else its own (new)."""
    if triple in stored_facts:
        return triple
    for index in members:
        duplicate = seen_edges.get(judgement.duplicate_of.get(index))
        if duplicate is not None:
            return fact_plan.fact_of(duplicate)
    return triple
