"""The plan of a text's facts (memory/fact_resolution.plan_facts, memory/fact_plan.py), without a
database: what was read of the facts' history, the text's graph and the resolve stage's judgement in,
the writes out."""

from __future__ import annotations

from datetime import UTC, datetime

from gligabao.db.fact_history import History, HistoryConflict, HistoryEdge, StatementRow
from gligabao.memory.extraction import TextEntity, TextFact, TextGraph
from gligabao.memory.fact_plan import NewEntity
from gligabao.memory.fact_resolution import Judgement, entity_keys, plan_facts

SAID = datetime(2025, 6, 1, tzinfo=UTC)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
ALICE, ROME, PARIS = 1, 2, 3


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


Y2020 = datetime(2020, 1, 1, tzinfo=UTC)


def edge(id_, target, *, valid=Y2020, invalid=None, expired=None, superseded_by=None, relation="lives_in"):
    names = {ROME: "Rome", PARIS: "Paris", 9: "Lyon"}
    return HistoryEdge(
        id_, ALICE, target, relation, "Alice", names[target], "", 100 + id_, valid, invalid, at(2020), expired,
        superseded_by, None,
    )  # fmt: skip


def statement(id_, edge_id, *, valid=Y2020, invalid=None, said=Y2020, ends=None, cut=False, cut_by=None):
    return StatementRow(id_, edge_id, 100 + edge_id, "said", valid, invalid, said, ends, cut, cut_by)


def graph(*targets: str, valid=None) -> TextGraph:
    alice = TextEntity("Alice", "alice", "person", "", {0})
    entities = [alice, *(TextEntity(t, t.lower(), "place", "", {0}) for t in targets)]
    facts = [
        TextFact(alice, e, "lives_in", f"Alice lives in {e.name}.", valid or SAID, None, {0})
        for e in entities[1:]
    ]
    return TextGraph(entities, facts, [])


def plan(text: TextGraph, seen: History, judgement: Judgement | None = None, matches=None, said=SAID):
    keys = entity_keys(text, matches or [ALICE, *[None] * (len(text.entities) - 1)])
    return plan_facts(
        text, keys, [[0.0]] * len(text.facts), judgement or Judgement(), seen,
        said_at=said, now=NOW, piece_artifacts=[500],
    )  # fmt: skip


def test_a_new_fact_the_resolve_stage_says_contradicts_a_stored_one_ends_it_and_is_judged_with_it():
    seen = History([edge(1, ROME)], [statement(10, 1)], [])
    planned = plan(graph("Paris"), seen, Judgement(contradicts={0: {1}}), matches=[ALICE, PARIS])

    writes = planned.plan.writes({}, [7])
    [rome] = writes.periods
    assert (rome.id, rome.invalid_at, rome.expired_at, rome.superseded_by) == (1, SAID, NOW, 7)
    [new] = writes.new_edges
    assert (new.id, new.target_id, new.valid_at, new.invalid_at) == (7, PARIS, SAID, None)
    [judged] = writes.conflicts
    assert {judged.edge_id, judged.other_edge_id} == {1, 7} and judged.contradicts and judged.said_at == SAID
    assert [e.id for e in planned.superseded()] == [1]


def test_a_restatement_asks_nothing_and_the_stored_judgements_apply_to_it():
    """Paris is stored (superseded by Rome in 2022): said again in 2021, from 2021, it ends where
    Rome, said later, begins, though the resolve stage was not asked about it."""
    seen = History(
        [edge(1, PARIS, invalid=at(2022), expired=at(2022), superseded_by=2), edge(2, ROME, valid=at(2022))],
        [
            statement(10, 1, ends=at(2022), cut=True, cut_by=2),
            statement(11, 2, valid=at(2022), said=at(2022)),
        ],
        [HistoryConflict(20, 2, 1, True, at(2022))],
    )
    planned = plan(graph("Paris", valid=at(2021)), seen, Judgement(), matches=[ALICE, PARIS], said=at(2021))

    writes = planned.plan.writes({}, [])
    assert writes.conflicts == []  # the stored judgement is the one that counts
    assert writes.new_edges == [] and writes.periods == []  # Paris holds 2020-2022 still: nothing changes
    [said] = [s for s in writes.statements if s.id is None]
    assert (said.edge_id, said.valid_at, said.ends_at, said.cut, said.cut_by) == (
        1,
        at(2021),
        at(2022),
        True,
        2,
    )


def test_a_duplicate_joins_the_fact_it_repeats():
    seen = History([edge(1, PARIS, relation="resides_in")], [statement(10, 1)], [])
    planned = plan(graph("Paris"), seen, Judgement(duplicate_of={0: 1}), matches=[ALICE, PARIS])

    writes = planned.plan.writes({}, [])
    assert writes.new_edges == []
    [said] = [s for s in writes.statements if s.id is None]
    assert said.edge_id == 1
    assert planned.row_of_fact == [1] and planned.stated == [1]


def test_a_judgement_about_an_edge_gone_since_is_dropped():
    planned = plan(graph("Paris"), History([], [], []), Judgement(contradicts={0: {99}}))

    writes = planned.plan.writes({NewEntity("paris"): PARIS}, [7])
    assert writes.conflicts == [] and [e.id for e in writes.new_edges] == [7]


def test_an_edge_without_statements_gets_one_when_its_fact_changes():
    """An edge the code before migration 0042 wrote (a rollback of the code after it ran): its period
    as stored, said when it was stored, written once a later fact ends it."""
    seen = History([edge(1, ROME)], [], [])
    planned = plan(graph("Paris"), seen, Judgement(contradicts={0: {1}}), matches=[ALICE, PARIS])

    writes = planned.plan.writes({}, [7])
    implicit = [s for s in writes.statements if s.id is None and s.edge_id == 1]
    assert [(s.valid_at, s.said_at, s.ends_at, s.cut_by) for s in implicit] == [(at(2020), at(2020), SAID, 7)]


def test_a_restatement_said_after_the_fact_that_superseded_it_holds_again_where_it_says():
    seen = History(
        [edge(1, PARIS, invalid=at(2022), expired=at(2022), superseded_by=2), edge(2, ROME, valid=at(2022))],
        [
            statement(10, 1, ends=at(2022), cut=True, cut_by=2),
            statement(11, 2, valid=at(2022), said=at(2022)),
        ],
        [HistoryConflict(20, 2, 1, True, at(2022))],
    )
    planned = plan(graph("Paris", valid=at(2021)), seen, Judgement(), matches=[ALICE, PARIS])

    periods = {p.id: p for p in planned.plan.writes({}, []).periods}
    assert (periods[1].invalid_at, periods[1].expired_at) == (None, None)  # live again, from 2020
    assert (periods[2].valid_at, periods[2].invalid_at, periods[2].superseded_by) == (at(2022), at(2022), 1)
