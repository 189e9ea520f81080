"""Namesakes: a question naming a person by first name only, in a dataset with many people of that
name, gets the relevant ones in its context (the ranked retrieval, GB_RETRIEVAL=ranked), not the
ten most recently updated ones. Vectors are the tests' fake embedder's (a hashed bag of words)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from query_helpers import Graph, fake_vector, retrieved

from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.ranking import estimated_tokens
from gligabao.memory.retrieval import Context

T0 = datetime(2024, 1, 1, tzinfo=UTC)
SURNAMES = "Adams Brown Chen Dubois Evans Fischer Garcia Hughes Ito Jones Klein Lopez Moreau Novak".split()


def many_alices(db) -> tuple[Graph, dict[str, int]]:
    """14 Alices with 5 facts each; only the two least recently updated say where they work."""
    graph = Graph(db)
    places = {
        name: graph.entity(name, "place", "a city", updated_at=T0) for name in ("Lyon", "Porto", "Oslo")
    }
    acme = graph.entity("Acme", "organization", "a robotics company", updated_at=T0)
    globex = graph.entity("Globex", "organization", "a food company", updated_at=T0)
    edges: dict[str, int] = {}
    for i, surname in enumerate(SURNAMES):
        name = f"Alice {surname}"
        moment = T0 + timedelta(days=i)  # Adams and Brown are the least recently updated
        role = "violinist" if surname == "Brown" else "pediatrician"
        alice = graph.entity(name, "person", f"a {role}", updated_at=moment)
        for relation, place in (("lives_in", "Lyon"), ("was_born_in", "Porto"), ("visited", "Oslo")):
            graph.edge(alice, places[place], relation, f"{name} {relation.replace('_', ' ')} {place}.")
        for friend in range(2):
            other = graph.entity(f"Friend {i}-{friend}", "person", "a friend", updated_at=moment)
            graph.edge(alice, other, "knows", f"{name} knows Friend {i}-{friend}.")
        if surname in ("Adams", "Brown"):
            employer = acme if surname == "Adams" else globex
            edges[surname] = graph.edge(
                alice, employer, "works_at", f"{name} works at {'Acme' if surname == 'Adams' else 'Globex'}."
            )
    return graph, edges


def context_tokens(context: Context) -> int:
    from gligabao.ai.prompts.query import edge_line, entity_line

    names = {entity.id: entity.name for entity in context.entities}
    return sum(estimated_tokens(entity_line(entity)) for entity in context.entities) + sum(
        estimated_tokens(edge_line(edge, names[edge.source_id], names[edge.target_id]))
        for edge in context.edges
    )


def ask(question: str, retrieval: str = "ranked") -> Context:
    return retrieved(question, fake_vector(question), retrieval=retrieval)


def test_where_does_alice_work_finds_the_alices_who_work_first_though_they_are_the_oldest(db):
    _, works = many_alices(db)
    question = "Where does Alice work?"

    ranked = ask(question)

    assert {edge.id for edge in ranked.edges[:2]} == set(works.values())
    assert context_tokens(ranked) <= DEFAULT_LIMITS.context_token_budget


def test_the_seeds_retrieval_gives_the_ten_newest_alices_and_misses_the_ones_who_work(db):
    """The control: the seed's rule (top 10 keyword seeds by recency) is what namesakes break."""
    _, works = many_alices(db)

    seed = ask("Where does Alice work?", "seed")

    assert not set(works.values()) & {edge.id for edge in seed.edges}
    assert len(seed.edges) >= 40


def test_a_first_name_with_what_the_person_is_ranks_that_namesakes_fact_first(db):
    _, works = many_alices(db)

    ranked = ask("Where does Alice the violinist work?")

    assert ranked.edges[0].id == works["Brown"]
    assert works["Adams"] in {edge.id for edge in ranked.edges}  # the other Alice who works, after
