"""Migrations 0042 and 0043 on rows written as the code before them wrote them: the statements and
judgements of the stored edges, and the rule applied where that code broke it (a fact said later
superseded by one said earlier; inverted periods; a superseded fact that kept its end where its
superseder held). Edges the old code got right come through unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from graph_rows import add_dataset, add_entity

from gligabao.db.migrate import migrate
from gligabao.settings import Settings


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class OldStore:
    """Rows as the code before 0042 left them: an artifact per text, edges with their links."""

    def __init__(self, db, dataset: int):
        self.db, self.dataset = db, dataset

    def text(self, said: str) -> int:
        return self.db.execute(
            """INSERT INTO gb_artifacts (dataset_id, kind, text, reference_time) VALUES (%s, 'text', 'x', %s)
               RETURNING id""",
            [self.dataset, at(said)],
        ).fetchone()[0]

    def edge(
        self, source, target, relation, said, valid, invalid=None, expired=False, superseded_by=None
    ) -> int:
        artifact = self.text(said)
        edge = self.db.execute(
            """INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, artifact_id, valid_at, invalid_at,
                                     expired_at, superseded_by)
               VALUES (%s, %s, %s, %s, %s, %s, %s, CASE WHEN %s THEN now() END, %s) RETURNING id""",
            [
                self.dataset,
                source,
                target,
                relation,
                artifact,
                at(valid),
                invalid and at(invalid),
                expired,
                superseded_by,
            ],
        ).fetchone()[0]
        self.db.execute("INSERT INTO gb_edge_artifacts VALUES (%s, %s)", [edge, artifact])
        return edge

    def supersede(self, edge: int, by: int, invalid: str) -> None:
        self.db.execute(
            "UPDATE gb_edges SET expired_at = now(), superseded_by = %s, invalid_at = %s WHERE id = %s",
            [by, at(invalid), edge],
        )


def period(db, edge: int) -> tuple:
    return db.execute(
        """SELECT to_char(valid_at, 'YYYY-MM-DD'), to_char(invalid_at, 'YYYY-MM-DD'), expired_at IS NOT NULL,
                  superseded_by FROM gb_edges WHERE id = %s""",
        [edge],
    ).fetchone()


@pytest.fixture
def before_0042(db):
    """The database as it was before migration 0042; whole again after the test."""
    db.execute("DROP TABLE IF EXISTS gb_edge_statements, gb_edge_conflicts")
    db.execute("DROP INDEX IF EXISTS gb_edges_fact")
    db.execute(  # migration 0024's, which 0042 drops
        """CREATE INDEX IF NOT EXISTS gb_edges_live_pair ON gb_edges (source_id, target_id, relation)
           WHERE expired_at IS NULL"""
    )
    db.execute("DELETE FROM gb_schema_migrations WHERE version IN (42, 43)")
    try:
        yield db
    finally:
        migrate(db, Settings().embedding_dimensions)


def test_the_rule_is_applied_to_what_the_old_code_stored_against_it(before_0042):
    db = before_0042
    dataset = add_dataset(db, "u1")
    alice, hugo, bob = (add_entity(db, dataset, name) for name in ("Alice", "Hugo", "Bob"))
    acme, globex, paris, rome, lyon, nice = (
        add_entity(db, dataset, name, "place") for name in ("Acme", "Globex", "Paris", "Rome", "Lyon", "Nice")
    )
    old = OldStore(db, dataset)
    # "Alice works at Globex" (said 2024-03), then "Alice works at Acme" (said 2023-01) arrived: the
    # old code ended Globex at Acme's start, before its own, and kept Acme live.
    globex_edge = old.edge(alice, globex, "works_at", "2024-03-01", "2024-03-01")
    acme_edge = old.edge(alice, acme, "works_at", "2023-01-01", "2023-01-01")
    old.supersede(globex_edge, acme_edge, "2023-01-01")
    # "Hugo lives in Paris" (said 2025-03), then "Hugo moved to Rome in 2024" (said 2025-06): Paris
    # ended in 2024, before it began.
    paris_edge = old.edge(hugo, paris, "lives_in", "2025-03-01", "2025-03-01")
    rome_edge = old.edge(hugo, rome, "lives_in", "2025-06-01", "2024-01-01")
    old.supersede(paris_edge, rome_edge, "2024-01-01")
    # Bob lived in Lyon until 2030 (said 2020), then "Bob moved to Nice in 2025" (said 2025): the old
    # code kept Lyon's own end, where Nice held from 2025.
    lyon_edge = old.edge(bob, lyon, "lives_in", "2020-01-01", "2020-01-01", invalid="2030-01-01")
    nice_edge = old.edge(bob, nice, "lives_in", "2025-01-01", "2025-01-01")
    old.supersede(lyon_edge, nice_edge, "2030-01-01")
    # A restatement's end before the fact's start closed it there.
    closed = old.edge(bob, acme, "works_at", "2021-01-01", "2021-01-01", invalid="2019-01-01")
    # Right as it was: Alice lived in Paris from 2019 and moved to Rome in 2022, said in that order.
    paris_2019 = old.edge(alice, paris, "lives_in", "2019-01-01", "2019-01-01")
    rome_2022 = old.edge(alice, rome, "lives_in", "2022-01-01", "2022-01-01")
    old.supersede(paris_2019, rome_2022, "2022-01-01")

    assert migrate(db, Settings().embedding_dimensions) == [
        "0042_fact_statements",
        "0043_repair_fact_histories",
    ]

    assert period(db, globex_edge) == ("2024-03-01", None, False, None)  # said last: holds now
    assert period(db, acme_edge) == ("2023-01-01", "2024-03-01", True, globex_edge)
    assert period(db, paris_edge) == ("2025-03-01", "2025-03-01", True, rome_edge)  # nothing of it remains
    assert period(db, rome_edge) == ("2024-01-01", None, False, None)
    assert period(db, lyon_edge) == ("2020-01-01", "2025-01-01", True, nice_edge)
    assert period(db, nice_edge) == ("2025-01-01", None, False, None)
    assert period(db, closed)[:3] == ("2021-01-01", "2021-01-01", True)
    assert period(db, paris_2019) == ("2019-01-01", "2022-01-01", True, rome_2022)
    assert period(db, rome_2022) == ("2022-01-01", None, False, None)
    assert db.execute("SELECT count(*) FROM gb_edges WHERE invalid_at < valid_at").fetchone()[0] == 0
    # Every edge has its statement, said when its text was; each supersession is a judgement.
    statements = db.execute(
        "SELECT edge_id, to_char(said_at, 'YYYY-MM-DD') FROM gb_edge_statements ORDER BY edge_id"
    ).fetchall()
    assert statements == [
        (globex_edge, "2024-03-01"),
        (acme_edge, "2023-01-01"),
        (paris_edge, "2025-03-01"),
        (rome_edge, "2025-06-01"),
        (lyon_edge, "2020-01-01"),
        (nice_edge, "2025-01-01"),
        (closed, "2021-01-01"),
        (paris_2019, "2019-01-01"),
        (rome_2022, "2022-01-01"),
    ]
    assert db.execute("SELECT count(*) FROM gb_edge_conflicts WHERE contradicts").fetchone()[0] == 4


def test_a_remember_after_the_repair_continues_the_history_the_repair_left(before_0042, api, models):
    from remember_helpers import remember

    db = before_0042
    dataset = add_dataset(db, "u1")
    hugo, paris, rome = (
        add_entity(db, dataset, "Hugo"),
        add_entity(db, dataset, "Paris", "place"),
        add_entity(db, dataset, "Rome", "place"),
    )
    old = OldStore(db, dataset)
    paris_edge = old.edge(hugo, paris, "lives_in", "2025-03-01", "2025-03-01")
    rome_edge = old.edge(hugo, rome, "lives_in", "2025-06-01", "2024-01-01")
    old.supersede(paris_edge, rome_edge, "2024-01-01")
    migrate(db, Settings().embedding_dimensions)

    # Said before both, a restatement of Paris (no model judges it): it ends where Rome begins, by
    # the judgement the old supersession left.
    body = remember(api, "Hugo lives in Paris.", reference_time="2023-01-01T00:00:00Z")

    [paris_again] = body["edges"]
    assert period(db, paris_again["id"]) == ("2023-01-01", "2024-01-01", True, rome_edge)
    assert period(db, rome_edge) == ("2024-01-01", None, False, None)
    assert period(db, paris_edge) == ("2025-03-01", "2025-03-01", True, rome_edge)
