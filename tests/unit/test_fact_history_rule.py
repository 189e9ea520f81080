"""The history rule's engine (memory/history.py), with no database: the issue's examples one by one,
then properties over random histories against the reference model (tests/history_reference.py).

A history here is what the product's store does, played in memory: each statement arrives on its
own, in a random order, against what was stored before; a fact seen for the first time is judged
against the stored facts as a careful model would (a functional relation of one person holds for one
place at a time), a fact already stored brings no judgement (the stored ones apply); stored rows get
ids as the database gives them. Then corrections and late statements (said before the correction,
arriving after it), and restores.

`make test` runs the properties with a bounded budget (HYPOTHESIS_PROFILE=ci, the default);
`make test-history` runs them longer.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from history_reference import Said, holding_at, timeline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gligabao.memory.history import (
    CORRECTION,
    FOREVER,
    SAID,
    Conflict,
    History,
    NewRow,
    NewStatement,
    Statement,
    contradicting,
    settle,
)

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

NEW_SEQ = 10**12
NOW = datetime(2030, 1, 1, tzinfo=UTC)
PLACES = ["Paris", "Rome", "Lyon"]


def year(y: float) -> datetime:
    return datetime(2000, 1, 1, tzinfo=UTC) + timedelta(days=round(365.25 * y))


def contradicts(a: tuple, b: tuple) -> bool:
    """As a careful model judges: one person lives in one place at a time; knowing is not exclusive."""
    return a != b and a[0] == b[0] and a[1] == b[1] == "lives_in"


class Store:
    """The product's store, in memory: each change settled against the history, then given ids."""

    def __init__(self) -> None:
        self.history = History()
        self.ids = 0
        self.extra: set[frozenset] = set()  # judgements a correction made

    def next_id(self) -> int:
        self.ids += 1
        return self.ids

    def say(self, said: Said) -> None:
        statement = Statement(
            NewStatement(0), said.fact, NewRow(1), said.valid_at, said.invalid_at, said.said_at, NEW_SEQ
        )
        known = {row.fact for row in self.history.rows.values()}
        judged = (
            []
            if said.fact in known  # a restatement: the stored judgements count
            else [
                Conflict(frozenset((fact, said.fact)), True, said.said_at, NEW_SEQ, (None, NewRow(1)))
                for fact in sorted(known)
                if contradicts(fact, said.fact)
            ]
        )
        self.apply([statement], judged)

    def correct(self, row_key: int, fact: tuple, valid_at, invalid_at, now: datetime) -> list[Said]:
        """What memory/corrections.py plans: the correction of the row's fact over its period, the
        new statement, and the judgements that the new fact contradicts what the old one did."""
        row = self.history.rows[row_key]
        record = Statement(
            NewStatement(0),
            row.fact,
            row_key,
            row.valid_at,
            row.invalid_at,
            now,
            NEW_SEQ,
            CORRECTION,
            cut_by=NewRow(1),
        )
        new = Statement(NewStatement(1), fact, NewRow(1), valid_at, invalid_at, now, NEW_SEQ)
        judged = []
        if fact != row.fact:
            relation = contradicting(self.history.conflicts)
            others = {f for pair, c in relation.items() if c and row.fact in pair for f in pair} | {row.fact}
            for other in sorted(others - {fact}):
                judged.append(Conflict(frozenset((fact, other)), True, now, NEW_SEQ, (NewRow(1), None)))
                self.extra.add(frozenset((fact, other)))
        self.apply([record, new], judged)
        return [
            Said(row.fact, row.valid_at, row.invalid_at, now, correction=True),
            Said(fact, valid_at, invalid_at, now),
        ]

    def restore(self, row_key: int, keep: bool, now: datetime) -> Said:
        row = self.history.rows[row_key]
        mine = [s for s in self.history.statements.values() if s.row == row_key and s.kind == SAID]
        starts = [s.valid_at for s in mine if s.valid_at is not None]
        valid_at = min(starts)
        invalid_at = None if any(s.invalid_at is None for s in mine) else max(s.invalid_at for s in mine)
        cutter = self.history.rows[row.superseded_by].fact
        judged = (
            [Conflict(frozenset((row.fact, cutter)), False, now, NEW_SEQ, (row_key, None))] if keep else []
        )
        self.apply(
            [Statement(NewStatement(0), row.fact, row_key, valid_at, invalid_at, now, NEW_SEQ)], judged
        )
        return Said(row.fact, valid_at, invalid_at, now, keeps=frozenset([cutter]) if keep else frozenset())

    def apply(self, statements: list[Statement], judged: list[Conflict]) -> None:
        settled = settle(self.history, statements, judged, NOW).history
        ids = {key: self.next_id() for key in settled.rows if isinstance(key, NewRow)}

        def stored(key):
            return ids.get(key, key)

        rows = {
            stored(k): replace(r, key=stored(k), superseded_by=stored(r.superseded_by), like=None)
            for k, r in settled.rows.items()
        }
        statements_after = {}
        for key, s in settled.statements.items():
            new_key = self.next_id() if isinstance(key, NewStatement) else key
            statements_after[new_key] = replace(
                s,
                key=new_key,
                seq=new_key if isinstance(key, NewStatement) else s.seq,
                row=stored(s.row),
                cut_by=stored(s.cut_by),
            )
        conflicts = [
            replace(
                c, seq=self.next_id() if c.seq == NEW_SEQ else c.seq, rows=tuple(stored(k) for k in c.rows)
            )
            for c in settled.conflicts
        ]
        self.history = History(rows, statements_after, conflicts)

    def stretches(self) -> dict[tuple, list]:
        found: dict[tuple, list] = {}
        for row in self.history.rows.values():
            if row.valid_at is not None and (row.invalid_at is None or row.invalid_at > row.valid_at):
                found.setdefault(row.fact, []).append((row.valid_at, row.invalid_at, row.superseded))
        return {fact: sorted(pieces, key=lambda p: (p[0], p[1] or FOREVER)) for fact, pieces in found.items()}

    def contradicting_now(self, a: tuple, b: tuple) -> bool:
        judged = contradicting(self.history.conflicts).get(frozenset((a, b)))
        return (contradicts(a, b) or frozenset((a, b)) in self.extra) and judged is not False


def assert_consistent(store: Store) -> None:
    """No period inverted, no fact's rows overlapping, no two contradicting facts at one instant."""
    for row in store.history.rows.values():
        assert row.valid_at is None or row.invalid_at is None or row.invalid_at >= row.valid_at, row
    for s in store.history.statements.values():
        assert s.valid_at is None or s.ends_at >= s.valid_at, s
    pieces = store.stretches()
    for fact, mine in pieces.items():
        for (_, end, _), (start, _, _) in pairwise(mine):
            assert end is not None and end < start, (fact, mine)
        for other, theirs in pieces.items():
            if store.contradicting_now(fact, other):
                for a, b, _ in mine:
                    for c, d, _ in theirs:
                        assert not (a < (d or FOREVER) and c < (b or FOREVER)), (fact, mine, other, theirs)


# --- the examples ------------------------------------------------------------------------


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_fact_said_earlier_that_arrives_later_is_stored_already_superseded():
    store = Store()
    globex, acme = ("Alice", "lives_in", "Globex"), ("Alice", "lives_in", "Acme")
    store.say(Said(globex, at("2024-03-01"), None, at("2024-03-01")))
    store.say(Said(acme, at("2023-01-01"), None, at("2023-01-01")))

    assert store.stretches() == {
        globex: [(at("2024-03-01"), None, False)],
        acme: [(at("2023-01-01"), at("2024-03-01"), True)],
    }
    assert_consistent(store)


def test_a_later_text_that_moves_a_start_back_empties_the_fact_it_overtakes():
    store = Store()
    paris, rome = ("Hugo", "lives_in", "Paris"), ("Hugo", "lives_in", "Rome")
    store.say(Said(paris, at("2025-03-01"), None, at("2025-03-01")))
    store.say(Said(rome, at("2024-01-01"), None, at("2025-06-01")))

    [row] = [r for r in store.history.rows.values() if r.fact == paris]
    assert (row.valid_at, row.invalid_at, row.superseded) == (at("2025-03-01"), at("2025-03-01"), True)
    assert holding_at(store.stretches(), at("2025-04-01")) == {rome}


def test_a_restatement_said_later_with_an_end_closes_the_fact_ended_not_superseded():
    store = Store()
    acme = ("Alice", "works_at", "Acme")
    store.say(Said(acme, at("2020-01-01"), None, at("2020-01-01")))
    store.say(Said(acme, None, at("2024-01-01"), at("2025-01-31")))

    assert store.stretches() == {acme: [(at("2020-01-01"), at("2024-01-01"), False)]}


def test_a_fact_said_between_two_statements_of_another_splits_it():
    """Acme said in 2020 and again in 2022, Globex said in 2021 from 2021: Acme, Globex, Acme."""
    store = Store()
    acme, globex = ("Alice", "lives_in", "Acme"), ("Alice", "lives_in", "Globex")
    store.say(Said(acme, at("2020-01-01"), None, at("2020-01-01")))
    store.say(Said(acme, at("2022-01-01"), None, at("2022-01-01")))
    store.say(Said(globex, at("2021-01-01"), None, at("2021-01-01")))

    assert store.stretches() == {
        acme: [(at("2020-01-01"), at("2021-01-01"), True), (at("2022-01-01"), None, False)],
        globex: [(at("2021-01-01"), at("2022-01-01"), True)],
    }
    assert len([r for r in store.history.rows.values() if r.fact == acme]) == 2  # split into two edges


def test_a_correction_outranks_a_statement_said_before_it_that_arrives_after_it():
    store = Store()
    globex, initech = ("Alice", "lives_in", "Globex"), ("Alice", "lives_in", "Initech")
    store.say(Said(globex, at("2024-03-01"), None, at("2024-03-01")))
    [row] = store.history.rows
    store.correct(row, initech, at("2024-03-01"), None, NOW)
    store.say(Said(globex, at("2024-06-01"), None, at("2024-06-01")))  # an older text, late

    assert store.stretches() == {initech: [(at("2024-03-01"), None, False)]}


@pytest.mark.parametrize("keep", [True, False])
def test_a_restore_makes_the_fact_hold_again_and_ends_or_keeps_its_superseder(keep):
    store = Store()
    paris, rome = ("Hugo", "lives_in", "Paris"), ("Hugo", "lives_in", "Rome")
    store.say(Said(paris, at("2025-03-01"), None, at("2025-03-01")))
    store.say(Said(rome, at("2024-01-01"), None, at("2025-06-01")))
    [emptied] = [k for k, r in store.history.rows.items() if r.fact == paris]

    store.restore(emptied, keep, NOW)

    expected_rome = (
        [(at("2024-01-01"), None, False)] if keep else [(at("2024-01-01"), at("2025-03-01"), True)]
    )
    assert store.stretches() == {paris: [(at("2025-03-01"), None, False)], rome: expected_rome}
    assert_consistent(store)


# --- properties over random histories -------------------------------------------------------------

FACTS = [("Alice", "lives_in", p) for p in PLACES] + [("Bob", "lives_in", "Paris"), ("Alice", "knows", "Bob")]


@st.composite
def histories(draw, extra: int = 0):
    """Statements of a few facts, each said at its own instant, starting at it, before or after it,
    or unknown (ended before it was said), ending or open; `extra` more to deliver late."""
    count = draw(st.integers(1, 7)) + extra
    said_days = draw(st.lists(st.integers(0, 24 * 12), min_size=count, max_size=count, unique=True))
    statements = []
    for day in said_days:
        said = year(day / 12)
        fact = draw(st.sampled_from(FACTS))
        shape = draw(st.sampled_from(["said then", "from a year", "ended before"]))
        if shape == "ended before":
            statements.append(
                Said(fact, None, year(draw(st.integers(0, day // 12))) if day >= 12 else said, said)
            )
            continue
        start = said if shape == "said then" else year(draw(st.integers(0, 25)))
        end = draw(st.one_of(st.none(), st.integers(0, 26).map(year)))
        statements.append(Said(fact, start, end if end is not None and end > start else None, said))
    return statements


def deliver(statements, order) -> Store:
    store = Store()
    for index in order:
        store.say(statements[index])
    return store


@given(histories(), st.randoms(use_true_random=False))
def test_every_delivery_order_stores_the_history_the_rule_says(statements, rng):
    expected = timeline(statements, contradicts)
    for _ in range(2):
        order = list(range(len(statements)))
        rng.shuffle(order)
        store = deliver(statements, order)
        assert_consistent(store)
        assert store.stretches() == expected
        for day in range(0, 27 * 4):
            instant = year(day / 4)
            assert holding_at(store.stretches(), instant) == holding_at(expected, instant)


@given(
    histories(extra=2),
    st.randoms(use_true_random=False),
    st.sampled_from(["target", "start", "both"]),
    st.sampled_from(PLACES),
)
def test_a_correction_then_late_texts_follow_the_rule(statements, rng, change, place):
    on_time, late = statements[:-2], statements[-2:]
    order = list(range(len(on_time)))
    rng.shuffle(order)
    store = deliver(on_time, order)
    live = sorted(
        (k, r) for k, r in store.history.rows.items() if not r.superseded and r.valid_at is not None
    )
    said = list(on_time)
    if live:
        key, row = live[0]
        fact = (row.fact[0], row.fact[1], place) if change in ("target", "both") else row.fact
        valid_at = row.valid_at + timedelta(days=100) if change in ("start", "both") else row.valid_at
        invalid_at = row.invalid_at if row.invalid_at is None or row.invalid_at > valid_at else None
        if (fact, valid_at, invalid_at) != (row.fact, row.valid_at, row.invalid_at):
            said += store.correct(key, fact, valid_at, invalid_at, NOW)
    for statement in late:
        store.say(statement)
        said.append(statement)

    def judged(a, b):
        return contradicts(a, b) or frozenset((a, b)) in store.extra

    assert_consistent(store)
    assert store.stretches() == timeline(said, judged)


@given(histories(), st.randoms(use_true_random=False), st.booleans())
def test_a_restore_follows_the_rule(statements, rng, keep):
    order = list(range(len(statements)))
    rng.shuffle(order)
    store = deliver(statements, order)
    superseded = sorted(
        k
        for k, r in store.history.rows.items()
        if r.superseded
        and r.superseded_by is not None
        and any(
            s.row == k and s.valid_at is not None and s.kind == SAID
            for s in store.history.statements.values()
        )
    )
    said = list(statements)
    if superseded:
        said.append(store.restore(superseded[0], keep, NOW))

    assert_consistent(store)
    assert store.stretches() == timeline(said, contradicts)
