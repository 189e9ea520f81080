"""What a plan writes (memory/fact_plan.py through db/fact_history.py) into a real database: every
edge it creates holds a sentence, a vector, a model and its provenance, a piece split off another
edge included, whether that edge is stored or created by the same plan."""

from __future__ import annotations

from datetime import UTC, datetime

from graph_rows import add_artifact, add_dataset, add_entity

from gligabao.db.fact_history import History
from gligabao.memory import fact_plan
from gligabao.memory.history import NewRow
from gligabao.settings import Settings


def year(y: int) -> datetime:
    return datetime(y, 1, 1, tzinfo=UTC)


def test_a_new_fact_that_holds_in_two_pieces_is_two_whole_edges(db):
    from gligabao import bootstrap

    dataset = add_dataset(db, "u1")
    alice, acme = add_entity(db, dataset, "Alice"), add_entity(db, dataset, "Acme", "organization")
    text = add_artifact(db, dataset)
    fact, row = (alice, acme, "works_at"), NewRow(1)
    # One change stating one new fact over two periods apart (two names of one entity, each with
    # its own period): the second period is a piece split off the first one's new edge.
    statements = [
        fact_plan.statement(0, fact, row, year(2010), year(2012), year(2020), artifact_id=text),
        fact_plan.statement(1, fact, row, year(2015), year(2018), year(2020), artifact_id=text),
    ]
    vector = [0.5] * Settings().embedding_dimensions
    new_fact = fact_plan.NewFact("Alice works at Acme.", vector, text, "claude-haiku-5-5")
    plan = fact_plan.plan_change(History([], [], []), statements, [], {row: new_fact}, year(2021))

    with bootstrap.bundle().database.transaction("u1") as uow:
        edge_ids = fact_plan.apply_plan(uow.conn, dataset, plan)

    rows = db.execute(
        """SELECT e.description, e.embedding IS NOT NULL, e.model_id, e.artifact_id,
                  extract(year FROM e.valid_at)::int, extract(year FROM e.invalid_at)::int,
                  array(SELECT l.artifact_id FROM gb_edge_artifacts l WHERE l.edge_id = e.id)
           FROM gb_edges e ORDER BY e.valid_at"""
    ).fetchall()
    whole = ("Alice works at Acme.", True, "claude-haiku-5-5", text)
    assert rows == [(*whole, 2010, 2012, [text]), (*whole, 2015, 2018, [text])]
    assert len(edge_ids) == 2
    # The response's edges are the stored ones.
    answered = [plan.stored_edge(NewRow(n), {alice: "Alice", acme: "Acme"}, {}, edge_ids, year(2021))
                for n in (1, 2)]  # fmt: skip
    assert [(e.description, e.model_id, e.artifact_id) for e in answered] == [(whole[0], whole[2], text)] * 2
