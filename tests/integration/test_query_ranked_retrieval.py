"""The ranked retrieval (GB_RETRIEVAL=ranked) on PostgreSQL: the same statements as the seed's, a
second hop in the context statement, each row's cosine with the question, a context within its
token budget. Vectors are the tests' fake embedder's (a hashed bag of words)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pgvector import Vector
from query_helpers import Graph, at_cosine, basis, fake_vector, retrieved
from sql_counting import counting_round_trips

from gligabao import bootstrap
from gligabao.ai.prompts.query import render_graph
from gligabao.db import graph_reads
from gligabao.db.graph_reads import Band
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.ranking import candidate_limits, estimated_tokens


def founder_graph(db) -> dict[str, int]:
    """Acme, founded by Bob, born in Lyon; 40 other people born in Lyon or Oslo who know Bob."""
    graph = Graph(db)
    acme = graph.entity("Acme", "organization", "a robotics company")
    bob = graph.entity("Bob Stone", "person", "an engineer")
    lyon, oslo = graph.entity("Lyon", "city", ""), graph.entity("Oslo", "city", "")
    ids = {
        "acme": acme,
        "founded": graph.edge(bob, acme, "founded", "Bob Stone was the founder of Acme."),
        "born": graph.edge(bob, lyon, "was_born_in", "Bob Stone was born in Lyon."),
    }
    for i in range(40):
        person = graph.entity(f"Person {i}", "person", "")
        graph.edge(person, lyon if i % 2 else oslo, "was_born_in", f"Person {i} was born there.")
        graph.edge(person, acme, "works_at", f"Person {i} works at Acme.")
    return ids


def test_the_second_hop_reaches_the_founders_birthplace_which_the_seeds_one_hop_misses(db):
    ids = founder_graph(db)
    question = "Where was the founder of Acme born?"

    ranked = retrieved(question, fake_vector(question), retrieval="ranked")
    seed = retrieved(question, fake_vector(question), retrieval="seed")

    assert {ids["founded"], ids["born"]} <= {edge.id for edge in ranked.edges}
    assert ids["born"] not in {edge.id for edge in seed.edges}


def test_every_row_of_the_context_carries_its_cosine_with_the_question(db):
    founder_graph(db)
    question = "Where was the founder of Acme born?"

    context = retrieved(question, fake_vector(question), retrieval="ranked")

    edges = {("edge", edge.id) for edge in context.edges}
    assert edges and edges <= context.similarity.keys()
    assert all(-1.0 <= cosine <= 1.0 for cosine in context.similarity.values())


def test_each_candidate_cosine_is_the_exact_one_and_an_entity_has_one_only_as_a_seed(db):
    """The context statement computes each cosine once (a similar fact's from its search, the
    first hop's in one place, the second hop's where it is chosen) and an entity's only when it
    is a seed: the values must still be the exact cosines."""
    ids = founder_graph(db)
    question = "Where was the founder of Acme born?"
    vector = fake_vector(question)
    limits = candidate_limits(DEFAULT_LIMITS.model_copy(update={"retrieval": "ranked"}))
    with bootstrap.bundle().database.transaction("u1", "main") as uow:
        keyword_seeds = [ids["acme"]]
        rows = graph_reads.send_context_rows(
            uow.conn, dataset_id=uow.dataset_id, vector=vector, keyword_seeds=keyword_seeds, limits=limits
        ).fetchall()
        exact = {
            (kind, row["id"]): row["cosine"]
            for kind, table in (("edge", "gb_edges"), ("entity", "gb_entities"))
            for row in uow.conn.execute(
                f"SELECT id, 1 - (embedding <=> %s) AS cosine FROM {table}", [Vector(vector)]
            )
        }

    edges = [row for row in rows if Band(row["band"]).kind == "edge"]
    entities = [row for row in rows if Band(row["band"]).kind == "entity"]
    assert ids["born"] in {row["id"] for row in edges if row["band"] == Band.EXPANSION}  # the second hop
    assert all(row["similarity"] == pytest.approx(exact["edge", row["id"]], abs=1e-6) for row in edges)
    seeds = [row for row in entities if row["band"] != Band.ENDPOINT]
    endpoints = [row for row in entities if row["band"] == Band.ENDPOINT]
    assert ids["acme"] in {row["id"] for row in seeds} and endpoints
    assert all(row["similarity"] == pytest.approx(exact["entity", row["id"]], abs=1e-6) for row in seeds)
    assert all(row["similarity"] is None for row in endpoints)


def test_the_ranked_context_fits_its_budget_and_costs_no_more_statements_than_the_seeds(db):
    founder_graph(db)
    question = "Who works at Acme?"
    budget = 250
    limits = DEFAULT_LIMITS.model_copy(update={"context_token_budget": budget})

    with counting_round_trips(this_thread_only=True) as ranked_count:
        ranked = retrieved(question, fake_vector(question), limits=limits, retrieval="ranked")
    with counting_round_trips(this_thread_only=True) as seed_count:
        seed = retrieved(question, fake_vector(question), limits=limits, retrieval="seed")

    # BEGIN with the keyword statement, the dataset's series flag, the context statement, COMMIT:
    # five statements in two waits (pipeline mode)
    assert ranked_count.count == seed_count.count <= 5, ranked_count.statements
    graph_lines = render_graph(ranked).splitlines()[1:-1]
    assert 0 < sum(estimated_tokens(line) for line in graph_lines) <= budget
    assert sum(estimated_tokens(line) for line in render_graph(seed).splitlines()[1:-1]) > budget


def test_a_hop_takes_the_towns_one_fact_of_its_own_however_many_newer_and_likelier_facts_its_people_have(db):
    """Alice grew up in Nandoro, which is part of Mirren Province: the town's one fact as its source,
    older and less like the question than the 40 facts of the people who live there. The hop takes
    the town's two sides in turn, by recency and by cosine: its fact of its own is a candidate."""
    graph = Graph(db)
    question = basis(0)
    alice = graph.entity("Alice Novak", "person", "", embedding=at_cosine(question, 0.2, 1))
    town = graph.entity("Nandoro", "town", "", embedding=at_cosine(question, 0.1, 2))
    region = graph.entity("Mirren Province", "region", "", embedding=at_cosine(question, 0.1, 3))
    start = datetime(2025, 1, 1, tzinfo=UTC)
    own = graph.edge(
        town, region, "part_of_region", "", created_at=start, embedding=at_cosine(question, 0.1, 4)
    )
    grew_up = graph.edge(
        alice, town, "grew_up_in", "", created_at=start, embedding=at_cosine(question, 0.7, 5)
    )
    for i in range(40):
        person = graph.entity(f"Person {i}", "person", "", embedding=at_cosine(question, 0.1, 10 + i))
        graph.edge(
            person,
            town,
            "resides_in",
            "",
            created_at=start + timedelta(days=1 + i),
            embedding=at_cosine(question, 0.6, 60 + i),
        )
    limits = candidate_limits(DEFAULT_LIMITS.model_copy(update={"retrieval": "ranked"}))
    with bootstrap.bundle().database.transaction("u1", "main") as uow:
        rows = graph_reads.send_context_rows(
            uow.conn,
            dataset_id=uow.dataset_id,
            vector=question,
            keyword_seeds=[alice],
            limits=limits,
            hop_terms=["country", "grow"],
        ).fetchall()

    edges = {row["id"] for row in rows if Band(row["band"]).kind == "edge"}
    assert grew_up in edges
    assert own in edges
