"""Step 6 of remember: which facts of the text are restatements, duplicates or contradictions.

- A fact with the same source, target and relation as a live edge restates it: no LLM.
- The other (new) facts are compared by the `resolve` stage, in one call per text, with the
  candidates: the live edges around their entities and the live edges whose vector has a cosine
  of at least `fact_candidate_similarity` with one of them, at most `max_fact_candidates`. No
  candidate, no call.
- A duplicate is a restatement. A contradicted edge is superseded (expired now, invalid from
  the new fact's valid_at unless it had an end). A restatement carrying an invalid_at the stored
  edge lacks closes the stored edge (invalid_at only: ended, not superseded).

The LLM is asked before the store's transaction (no lock is held during a model call); the store
re-checks everything under the dataset's lock, so a decision about an edge that changed in the
meantime is dropped rather than applied to a stale row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import psycopg

from gligabao.ai.prompts.resolve import RESOLVE_MAX_TOKENS, FactLine, Resolution, resolve_prompt
from gligabao.ai.stages import level_for
from gligabao.db import graph_writes
from gligabao.limits import Limits
from gligabao.memory.extraction import TextFact, TextGraph
from gligabao.memory.temporal import is_restatement_period, superseded_invalid_at
from gligabao.model import EndedEdge, StoredEdge, StoredEntity
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
    new_facts: list[int]  # indexes of the facts that restate no live edge
    edges: list[StoredEdge]  # the live edges they may repeat or contradict


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
    """The facts the resolve stage must judge and the live edges to judge them against (reads
    only). Two round trips: the known entities with the live edges the facts restate, then the
    candidates, whose statement is only sent: the returned function reads them, after the
    transaction's end in pipeline mode (so that they share the round trip of its COMMIT).
    `restated_too`: every fact is judged, restatement or not, against every candidate (a window
    of texts: what restates a live edge now may not when its text's turn comes)."""
    position = {}
    for index, entity in enumerate(graph.entities):
        position.setdefault(entity.normalized_name, index)
    fact_ends = [
        (position[f.source.normalized_name], position[f.target.normalized_name], f.relation)
        for f in graph.facts
    ]
    matches, live = graph_writes.known_entities_and_live_edges(
        conn,
        dataset_id,
        [e.normalized_name for e in graph.entities],
        entity_vectors,
        limits.entity_match_similarity,
        fact_ends,
        limits.entity_name_guard,
        exact_max=limits.exact_scan_max_rows,
        walk=limits.hnsw_candidates,
    )
    known = {
        entity.normalized_name: match for entity, match in zip(graph.entities, matches, strict=True) if match
    }
    triples = {
        index: (known[f.source.normalized_name], known[f.target.normalized_name], f.relation)
        for index, f in enumerate(graph.facts)
        if f.source.normalized_name in known and f.target.normalized_name in known
    }
    restated = {} if restated_too else _restatements(graph.facts, triples, live)
    new_facts = [index for index in range(len(graph.facts)) if index not in restated]
    if not new_facts:
        return lambda: Candidates([], [])
    around = {
        known[name]
        for i in new_facts
        for name in (graph.facts[i].source.normalized_name, graph.facts[i].target.normalized_name)
        if name in known
    }
    edges = graph_writes.send_candidate_edges(
        conn,
        dataset_id,
        sorted(around),
        [fact_vectors[i] for i in new_facts],
        threshold=limits.fact_candidate_similarity,
        limit=limits.max_fact_candidates,
        per_entity=limits.fact_candidates_per_entity,
        exact_max=limits.exact_scan_max_rows,
        exclude_ids=sorted({edge.id for edge in restated.values()}),
    )
    return lambda: Candidates(new_facts, edges.fetchall())


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
class StatedEdge:
    """An edge the text states: created now, or a stored one it restates."""

    edge: StoredEdge  # with its endpoints' names; `created` says whether this text created it
    pieces: set[int]


@dataclass
class FactsStored:
    stated: list[StatedEdge]
    superseded: list[EndedEdge]
    edge_of_fact: list[int] = field(default_factory=list)  # the edge each fact of the text is, by index


def store_facts(
    conn: psycopg.Connection,
    dataset_id: int,
    graph: TextGraph,
    entities: dict[str, StoredEntity],
    fact_vectors: Sequence[Sequence[float]],
    judgement: Judgement,
    piece_artifacts: Sequence[int],
    now: datetime,
    live: Sequence[StoredEdge] | None = None,
    model_id: str | None = None,
) -> FactsStored:
    """Insert the new edges (with `model_id`, the model that extracted them), link the restated
    ones, close and supersede; under the dataset's lock.
    `live`: the live edges of the facts' triples and of the judgement (`send_live_edges`), when
    the caller read them already. The ends are written without reading them back: under the lock,
    the live edges read stay live until the transaction ends."""
    groups = _group_by_triple(graph.facts, entities)
    triples = list(groups)
    if live is None:
        live = graph_writes.live_edges(conn, dataset_id, triples, sorted(judgement.edge_ids()))
    live_by_id = {edge.id: edge for edge in live}

    restated: dict[tuple, StoredEdge] = {}
    for triple, members in groups.items():
        edge = _same_triple_edge(live, triple, graph.facts[members[0]].valid_at) or _duplicate_edge(
            members, judgement, live_by_id
        )
        if edge is not None:
            restated[triple] = edge

    new_triples = [t for t in triples if t not in restated]
    inserted = _insert_new_edges(
        conn, dataset_id, graph, groups, new_triples, fact_vectors, piece_artifacts, model_id
    )
    stated_edge_ids = {triple: edge.id for triple, edge in (*restated.items(), *inserted.items())}
    ends = _edge_ends(graph, groups, restated, stated_edge_ids, judgement, live_by_id, now)
    if ends:
        graph_writes.send_end_edges(conn, dataset_id, ends, now)
    ended = {
        end.edge_id: EndedEdge(end.edge_id, end.invalid_at, now if end.supersede else None)
        for end in ends
        if end.edge_id in live_by_id
    }

    names = {stored.id: stored.name for stored in entities.values()}
    stated = []
    for triple in triples:  # in the order the text states them
        pieces = _pieces(graph, groups[triple])
        if triple in restated:
            edge = restated[triple]
            if edge.id in ended:
                edge = replace(edge, invalid_at=ended[edge.id].invalid_at)
            stated.append(StatedEdge(replace(edge, created=False), pieces))
        else:
            edge = replace(inserted[triple], source=names[triple[0]], target=names[triple[1]], created=True)
            stated.append(StatedEdge(edge, pieces))
    superseded = sorted((edge for edge in ended.values() if edge.expired_at is not None), key=lambda e: e.id)
    triple_of = {index: triple for triple, members in groups.items() for index in members}
    edge_of_fact = [stated_edge_ids[triple_of[index]] for index in range(len(graph.facts))]
    return FactsStored(_merge_restated_twice(stated), superseded, edge_of_fact)


def _insert_new_edges(
    conn: psycopg.Connection,
    dataset_id: int,
    graph: TextGraph,
    groups: dict[tuple, list[int]],
    new_triples: list[tuple],
    fact_vectors: Sequence[Sequence[float]],
    piece_artifacts: Sequence[int],
    model_id: str | None,
) -> dict[tuple, StoredEdge]:
    """Insert the facts that restate nothing; triple -> the edge stored."""
    if not new_triples:
        return {}
    rows = []
    for triple in new_triples:
        fact = graph.facts[groups[triple][0]]
        first_piece = min(_pieces(graph, groups[triple]))
        rows.append(
            graph_writes.EdgeRow(
                *triple,
                fact.description,
                piece_artifacts[first_piece],
                fact.valid_at,
                fact.invalid_at,
                fact_vectors[groups[triple][0]],
            )
        )
    return dict(zip(new_triples, graph_writes.insert_edges(conn, dataset_id, rows, model_id), strict=True))


def send_live_edges(
    conn: psycopg.Connection,
    dataset_id: int,
    graph: TextGraph,
    known: dict[str, int],
    judgement: Judgement,
) -> psycopg.Cursor[StoredEdge]:
    """The statement of the live edges `store_facts` needs, sent before the entities are stored:
    only facts between known entities (`known`: normalized name -> id) can restate a live edge."""
    triples = {
        (known[f.source.normalized_name], known[f.target.normalized_name], f.relation)
        for f in graph.facts
        if f.source.normalized_name in known and f.target.normalized_name in known
    }
    return graph_writes.send_live_edges(conn, dataset_id, sorted(triples), sorted(judgement.edge_ids()))


def _group_by_triple(facts: Sequence[TextFact], entities: dict[str, StoredEntity]) -> dict[tuple, list[int]]:
    """Fact indexes by (source_id, target_id, relation): two names of one entity state one fact."""
    groups: dict[tuple, list[int]] = {}
    for index, fact in enumerate(facts):
        triple = (
            entities[fact.source.normalized_name].id,
            entities[fact.target.normalized_name].id,
            fact.relation,
        )
        groups.setdefault(triple, []).append(index)
    return groups


def _restatements(
    facts: Sequence[TextFact], triples: dict[int, tuple], live: Sequence[StoredEdge]
) -> dict[int, StoredEdge]:
    found = {}
    for index, triple in triples.items():
        edge = _same_triple_edge(live, triple, facts[index].valid_at)
        if edge is not None:
            found[index] = edge
    return found


def _same_triple_edge(
    live: Sequence[StoredEdge], triple: tuple, valid_at: datetime | None
) -> StoredEdge | None:
    """The oldest live edge with this (source_id, target_id, relation) that the fact restates."""
    return next(
        (
            edge
            for edge in live
            if (edge.source_id, edge.target_id, edge.relation) == triple
            and is_restatement_period(edge.invalid_at, valid_at)
        ),
        None,
    )


def _duplicate_edge(
    members: Sequence[int], judgement: Judgement, live_by_id: dict[int, StoredEdge]
) -> StoredEdge | None:
    for index in members:
        edge = live_by_id.get(judgement.duplicate_of.get(index))
        if edge is not None:
            return edge
    return None


def _edge_ends(
    graph: TextGraph,
    groups: dict[tuple, list[int]],
    restated: dict[tuple, StoredEdge],
    stated_edge_ids: dict[tuple, int],
    judgement: Judgement,
    live_by_id: dict[int, StoredEdge],
    now: datetime,
) -> list[graph_writes.EdgeEnd]:
    ends: dict[int, graph_writes.EdgeEnd] = {}
    # A restatement that says the fact ended closes the stored edge.
    for triple, edge in restated.items():
        invalid_at = min(
            (graph.facts[i].invalid_at for i in groups[triple] if graph.facts[i].invalid_at), default=None
        )
        if invalid_at is not None and edge.invalid_at is None:
            ends[edge.id] = graph_writes.EdgeEnd(edge.id, invalid_at, supersede=False)
    # A contradicted edge is superseded, unless this text states it too.
    # The superseder is the edge of the contradicting fact (the earliest, when several contradict it).
    stated_ids = {edge.id for edge in restated.values()}
    triple_of = {index: triple for triple, members in groups.items() for index in members}
    for index, edge_ids in judgement.contradicts.items():
        for edge_id in sorted(edge_ids):
            edge = live_by_id.get(edge_id)
            if edge is None or edge_id in stated_ids:
                continue
            invalid_at = superseded_invalid_at(edge.invalid_at, graph.facts[index].valid_at, now)
            superseded_by = stated_edge_ids[triple_of[index]]
            previous = ends.get(edge_id)
            if previous is not None and previous.supersede and previous.invalid_at <= invalid_at:
                invalid_at, superseded_by = previous.invalid_at, previous.superseded_by
            ends[edge_id] = graph_writes.EdgeEnd(
                edge_id, invalid_at, supersede=True, superseded_by=superseded_by
            )
    return [ends[edge_id] for edge_id in sorted(ends)]


def _pieces(graph: TextGraph, members: Sequence[int]) -> set[int]:
    return set().union(*(graph.facts[i].pieces for i in members))


def _merge_restated_twice(stated: list[StatedEdge]) -> list[StatedEdge]:
    """One entry per edge, when two facts of the text restate the same stored edge."""
    merged: dict[int, StatedEdge] = {}
    for stated_edge in stated:
        if stated_edge.edge.id in merged:
            merged[stated_edge.edge.id].pieces |= stated_edge.pieces
        else:
            merged[stated_edge.edge.id] = stated_edge
    return list(merged.values())
