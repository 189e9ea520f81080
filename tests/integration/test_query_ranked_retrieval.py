"""The ranked retrieval (GB_RETRIEVAL=ranked) on PostgreSQL: the same statements as the seed's, a
second hop in the context statement, each row's cosine with the question, a context within its
token budget. Vectors are the tests' fake embedder's (a hashed bag of words)."""

from __future__ import annotations

from query_helpers import Graph, fake_vector, retrieved
from sql_counting import counting_round_trips

from gligabao.ai.prompts.query import render_graph
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.ranking import estimated_tokens


def founder_graph(db) -> dict[str, int]:
    """Acme, founded by Bob, born in Lyon; 40 other people born in Lyon or Oslo who know Bob."""
    graph = Graph(db)
    acme = graph.entity("Acme", "organization", "a robotics company")
    bob = graph.entity("Bob Stone", "person", "an engineer")
    lyon, oslo = graph.entity("Lyon", "city", ""), graph.entity("Oslo", "city", "")
    ids = {
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


def test_the_ranked_context_fits_its_budget_and_costs_no_more_statements_than_the_seeds(db):
    founder_graph(db)
    question = "Who works at Acme?"
    budget = 250
    limits = DEFAULT_LIMITS.model_copy(update={"context_token_budget": budget})

    with counting_round_trips(this_thread_only=True) as ranked_count:
        ranked = retrieved(question, fake_vector(question), limits=limits, retrieval="ranked")
    with counting_round_trips(this_thread_only=True) as seed_count:
        seed = retrieved(question, fake_vector(question), limits=limits, retrieval="seed")

    assert ranked_count.count == seed_count.count <= 4, ranked_count.statements
    graph_lines = render_graph(ranked).splitlines()[1:-1]
    assert 0 < sum(estimated_tokens(line) for line in graph_lines) <= budget
    assert sum(estimated_tokens(line) for line in render_graph(seed).splitlines()[1:-1]) > budget
