"""The series a query's context shows (memory/timeseries.py `context_series`): those anchored to the
context's entities and facts, best anchored first, at most GB_CONTEXT_SERIES of them with their
GB_CONTEXT_SERIES_POINTS latest points, in one statement; and what the stores cost in round trips."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graph_rows import add_artifact, add_dataset, add_edge, add_entity
from sql_counting import counting_round_trips

from gligabao import bootstrap
from gligabao.memory import timeseries
from gligabao.memory.timeseries import Anchor, EdgeSelector, EntitySelector, Point, SeriesInput

START = datetime(2025, 1, 1, tzinfo=UTC)


def daily(*values: float) -> list[Point]:
    return [Point(START + timedelta(days=n), value) for n, value in enumerate(values)]


def graph(db) -> dict[str, int]:
    dataset = add_dataset(db, "u1")
    alice, acme = add_entity(db, dataset, "Alice"), add_entity(db, dataset, "Acme", "organization")
    bob = add_entity(db, dataset, "Bob")
    artifact = add_artifact(db, dataset)
    works_at = add_edge(db, dataset, alice, acme, "works_at", artifact_id=artifact)
    return {"dataset": dataset, "Alice": alice, "Acme": acme, "Bob": bob, "works_at": works_at}


def store(memory, *series: SeriesInput) -> list[timeseries.StoredSeries]:
    return timeseries.attach(memory, "u1", "main", list(series)).series


def test_the_context_shows_the_series_of_its_entities_and_facts_best_anchored_first(db):
    memory = bootstrap.bundle()
    ids = graph(db)
    store(
        memory,
        SeriesInput("BOB.mood", daily(1, 2), anchors=[Anchor(entity_id=ids["Bob"])]),
        SeriesInput(
            "ACME.close",
            daily(10, 11, 12, 13, 14, 15, 16),
            unit="USD",
            anchors=[Anchor(entity_id=ids["Acme"])],
        ),
        SeriesInput("ALICE.tenure", daily(1), anchors=[Anchor(edge_id=ids["works_at"])]),
    )

    with memory.database.transaction("u1") as uow, counting_round_trips(this_thread_only=True) as trips:
        found = timeseries.context_series(
            uow, ids["dataset"], [ids["Acme"], ids["Alice"]], [ids["works_at"]], memory.limits
        )

    assert trips.count == 1
    assert [one.series.key for one in found] == ["ACME.close", "ALICE.tenure"]  # Bob is not in the context
    acme = found[0]
    assert [p.value for p in acme.latest] == [12, 13, 14, 15, 16]  # GB_CONTEXT_SERIES_POINTS, oldest first
    assert acme.series.stats.count == 7 and acme.series.anchors[0].label == "Acme"
    lines = timeseries.render_series_lines(found)
    assert lines[0].startswith("[series ") and "ACME.close (USD) of Acme(" in lines[0]
    assert "ALICE.tenure of Alice -works_at-> Acme (fact" in lines[1]


def test_the_context_shows_at_most_the_configured_series_and_none_without_ids(db):
    memory = bootstrap.bundle()
    ids = graph(db)
    store(
        memory, *(SeriesInput(f"S{n}", daily(n), anchors=[Anchor(entity_id=ids["Acme"])]) for n in range(8))
    )
    store(memory, SeriesInput("S0", daily(5, 6), anchors=[Anchor(entity_id=ids["Acme"])]))  # updated again
    limits = memory.limits.model_copy(update={"context_series": 3, "context_series_points": 1})

    with memory.database.transaction("u1") as uow:
        found = timeseries.context_series(uow, ids["dataset"], [ids["Acme"]], [], limits)
        with counting_round_trips(this_thread_only=True) as trips:
            nothing = timeseries.context_series(uow, ids["dataset"], [], [], limits)

    assert [one.series.key for one in found] == ["S0", "S7", "S6"]  # the most recently updated
    assert all(len(one.latest) == 1 for one in found)
    assert nothing == [] and trips.count == 0


def test_another_users_transaction_finds_no_series_for_the_context(db):
    memory = bootstrap.bundle()
    ids = graph(db)
    store(memory, SeriesInput("ACME.close", daily(1), anchors=[Anchor(entity_id=ids["Acme"])]))

    with memory.database.transaction("u2") as uow:
        assert timeseries.context_series(uow, ids["dataset"], [ids["Acme"]], [], memory.limits) == []


def test_a_store_of_many_series_costs_three_statements(db):
    memory = bootstrap.bundle()
    ids = graph(db)
    series = [
        SeriesInput(
            f"K{n}",
            daily(*range(100)),
            anchors=[
                Anchor(entity=EntitySelector("acme")),
                Anchor(edge=EdgeSelector("Alice", "Works At", "ACME")),
                Anchor(entity_id=ids["Bob"], role="peer"),
            ],
        )
        for n in range(20)
    ]

    with (
        memory.database.transaction("u1", "main") as uow,
        counting_round_trips(this_thread_only=True) as trips,
    ):
        stored = timeseries.store_series(uow, uow.dataset_id, series)

    assert trips.count == 3  # the anchors' lookup, the writes, the read-back
    assert [s.stats.count for s in stored] == [100] * 20
    assert [(a.type, a.id, a.role) for a in stored[0].anchors] == [
        ("entity", ids["Acme"], ""),
        ("edge", ids["works_at"], ""),
        ("entity", ids["Bob"], "peer"),
    ]


def test_an_anchor_given_again_takes_its_new_role_and_window(db):
    memory = bootstrap.bundle()
    ids = graph(db)
    window = (START, START + timedelta(days=3))
    store(
        memory,
        SeriesInput("K", daily(1), anchors=[Anchor(entity_id=ids["Acme"], role="price", window=window)]),
    )

    [again] = store(memory, SeriesInput("K", daily(2), anchors=[Anchor(entity_id=ids["Acme"])]))
    [third] = store(
        memory, SeriesInput("K", daily(3), anchors=[Anchor(entity_id=ids["Acme"], role="subject")])
    )

    assert [(a.role, a.window_start) for a in again.anchors] == [("", None)]
    assert [(a.role, a.window_start) for a in third.anchors] == [("subject", None)]
