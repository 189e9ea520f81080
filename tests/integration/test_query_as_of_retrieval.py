"""Retrieval as of a time (SPEC section 6): every path a fact can take into the context (the edges
around the seeds, the edge index searched exactly or through HNSW) lets through the facts valid
at `as_of` (`valid_at <= as_of < invalid_at`, or no invalid_at), superseded or not; without it,
the live facts only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from query_helpers import Graph, at_cosine, basis, retrieved, retrieved_pipelined
from sql_counting import counting_round_trips

from gligabao.limits import DEFAULT_LIMITS

Q = basis(0)
Y2019 = datetime(2019, 1, 1, tzinfo=UTC)
Y2024 = datetime(2024, 1, 1, tzinfo=UTC)
LATER = datetime(2024, 3, 1, tzinfo=UTC)
SECOND = timedelta(seconds=1)
HNSW_ONLY = DEFAULT_LIMITS.model_copy(update={"exact_scan_max_rows": 0})


def near(cosine: float, away: int) -> list[float]:
    return at_cosine(Q, cosine, away)


def moved(db, candidate_below_threshold: bool = False) -> tuple[int, int]:
    """Alice at Acme from 2019 until 2024 (superseded when Globex was learned), at Globex since 2024.
    The entities have no vector: only the edge index can find the facts by similarity.

    `candidate_below_threshold`: also a fact of Bob's far from the question. Seen among the index's
    candidates, it shows they held every match (under row-level security a short list of
    candidates may be another user's rows hidden: without it the exact scan runs after the index)."""
    graph = Graph(db)
    if candidate_below_threshold:
        bob, carol = graph.entity("Bob", embedding=None), graph.entity("Carol", embedding=None)
        graph.edge(bob, carol, "knows", valid_at=Y2019, embedding=near(0.1, 3))
    alice = graph.entity("Alice", embedding=None)
    acme = graph.entity("Acme", "organization", embedding=None)
    globex = graph.entity("Globex", "organization", embedding=None)
    acme_edge = graph.edge(
        alice, acme, "works_at", valid_at=Y2019, invalid_at=Y2024, expired_at=LATER, embedding=near(0.95, 1)
    )
    globex_edge = graph.edge(alice, globex, "works_at", valid_at=Y2024, embedding=near(0.9, 2))
    return acme_edge, globex_edge


@pytest.mark.parametrize(
    ("as_of", "valid"),
    [
        (Y2019 - SECOND, "neither"),
        (Y2019, "acme"),  # valid_at <= as_of: it holds from its first instant
        (Y2024 - SECOND, "acme"),
        (Y2024, "globex"),  # invalid_at > as_of: it no longer holds at its last instant
        (LATER + timedelta(days=400), "globex"),
    ],
)
def test_the_edges_around_the_seeds_are_those_valid_at_as_of(db, as_of, valid):
    acme_edge, globex_edge = moved(db)
    expected = {"neither": [], "acme": [acme_edge], "globex": [globex_edge]}[valid]

    context = retrieved("Where did Alice work?", as_of=as_of)

    assert [edge.id for edge in context.edges] == expected


@pytest.mark.parametrize("limits", [DEFAULT_LIMITS, HNSW_ONLY], ids=["exact", "hnsw"])
def test_the_edge_index_finds_a_superseded_fact_valid_at_as_of(db, limits):
    acme_edge, globex_edge = moved(db, candidate_below_threshold=True)

    then = retrieved("xyzzy?", Q, as_of=Y2019 + timedelta(days=900), limits=limits)
    now = retrieved("xyzzy?", Q, limits=limits)

    assert then.similar_edges == [acme_edge]
    assert now.similar_edges == [globex_edge]
    assert (
        then.search_paths["edges"]
        == now.search_paths["edges"]
        == ("exact" if limits is DEFAULT_LIMITS else "hnsw")
    )


def test_created_at_does_not_matter_a_fact_learned_later_answers_for_the_time_it_held(db):
    graph = Graph(db)
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    learned_in_2025 = graph.edge(
        alice, acme, "works_at", valid_at=Y2019, created_at=datetime(2025, 1, 1, tzinfo=UTC)
    )

    context = retrieved("Where did Alice work?", as_of=datetime(2020, 1, 1, tzinfo=UTC))

    assert [edge.id for edge in context.edges] == [learned_in_2025]


def test_a_fact_without_valid_at_is_not_known_to_hold_at_any_time(db):
    graph = Graph(db)
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    graph.edge(alice, acme, "works_at", valid_at=None)

    assert retrieved("Where did Alice work?", as_of=Y2024).edges == []
    assert len(retrieved("Where did Alice work?").edges) == 1


def test_the_expansion_cap_counts_the_facts_valid_at_as_of_newest_first(db):
    graph = Graph(db)
    alice = graph.entity("Alice", embedding=None)
    places = [graph.entity(f"Place {i}", "place", embedding=None) for i in range(6)]
    created = [Y2019 + timedelta(days=i) for i in range(6)]
    edges = [
        graph.edge(
            alice, place, "visited", valid_at=Y2019, invalid_at=Y2024, expired_at=LATER, created_at=moment
        )
        for place, moment in zip(places, created, strict=True)
    ]
    graph.edge(alice, graph.entity("Later", "place", embedding=None), "visited", valid_at=LATER)
    capped = DEFAULT_LIMITS.model_copy(update={"expansion_edges": 4})

    context = retrieved("Alice", as_of=Y2024 - SECOND, limits=capped)

    assert [edge.id for edge in context.edges] == edges[::-1][:4]


def test_a_question_as_of_a_time_takes_the_same_two_round_trips(db):
    moved(db)
    retrieved_pipelined("Where did Alice work?", Q, as_of=Y2024 - SECOND)
    with counting_round_trips(this_thread_only=True) as counted:
        context = retrieved_pipelined("Where did Alice work?", Q, as_of=Y2024 - SECOND)

    assert context.edges
    # BEGIN and the user with the keyword statement; the context statement with COMMIT
    assert counted.count == 2, counted.statements


def test_another_users_facts_valid_at_as_of_are_never_retrieved(db):
    other = Graph(db, "u2")
    bob, acme = other.entity("Alice", embedding=None), other.entity("Acme", "organization", embedding=None)
    other.edge(
        bob, acme, "works_at", valid_at=Y2019, invalid_at=Y2024, expired_at=LATER, embedding=near(0.99, 1)
    )
    mine = Graph(db, "u1")
    mine.entity("Alice", embedding=None)

    context = retrieved("Where did Alice work?", Q, as_of=Y2019 + timedelta(days=1))

    assert context.edges == [] and context.similar_edges == []
