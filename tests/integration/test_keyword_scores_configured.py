"""The keyword scores are the limits' (gligabao.limits), not numbers written into the SQL: with
other scores configured, the keyword seeds are still exactly the brute-force top (seeds/query.md,
"How it works", step 1)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from query_helpers import T0, Graph, keyword_score, retrieved

from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.retrieval import query_terms

WORDS = ["acme", "paris", "engineer", "berlin", "music", "coffee", "new", "york", "garden", "ai"]
QUESTIONS = [
    "Where does Alice work?",
    "What about coffee in Paris and Berlin?",
    "new york music garden",
    "engineer acme paris coffee music",
    "Who is Ai?",
    "acme acme engineer ai",
]


def random_graph(db, seed: int) -> list[tuple[int, str, str, object]]:
    rng = random.Random(seed)
    graph = Graph(db)
    entities = []
    for i in range(60):
        name = " ".join(
            rng.sample(["Alice", "Bob", "New", "York", "Acme", "Zed", "Coffee", "Ai"], rng.randint(1, 2))
        )
        name = f"{name} {i}" if rng.random() < 0.8 else name + "x" * i
        description = " ".join(rng.choices(WORDS, k=rng.randint(0, 6)))
        updated_at = T0 + timedelta(minutes=rng.randrange(100))  # ties on purpose
        entity_id = graph.entity(name, "thing", description, embedding=None, updated_at=updated_at)
        entities.append((entity_id, name, description, updated_at))
    return entities


@pytest.mark.parametrize(
    "scores",
    [
        {"whole_name_score": 7, "term_in_name_score": 2, "term_in_description_score": 3},
        {"whole_name_score": 1, "term_in_name_score": 1, "term_in_description_score": 2},
        {"whole_name_score": 0, "term_in_name_score": 4, "term_in_description_score": 0},
    ],
    ids=["description-weighs-more", "flat", "names-only"],
)
def test_keyword_seeds_are_the_exact_top_with_the_configured_scores_at_any_window(db, scores):
    entities = random_graph(db, seed=7)
    for window in (1, 3, 7, 20, 500):
        limits = DEFAULT_LIMITS.model_copy(update={**scores, "keyword_window": window})
        for question in QUESTIONS:
            terms, normalized = query_terms(question), " ".join(question.lower().split())
            ranked = sorted(
                (
                    (keyword_score(name, description, terms, normalized, limits), moment, entity_id)
                    for entity_id, name, description, moment in entities
                ),
                reverse=True,
            )
            expected = [entity_id for score, _, entity_id in ranked if score > 0][: limits.keyword_seeds]

            assert retrieved(question, limits=limits).keyword_seeds == expected, (window, question)


def test_an_older_entity_outranks_the_window_with_fewer_terms_when_a_description_term_weighs_more(db):
    """Outside the window, two description terms of 3 (6) beat the window's name matches (4): the
    search of older entities needs 2 terms here, not the 5 it would need at 1 per term."""
    graph = Graph(db)
    older = graph.entity("Zed", "thing", "acme paris", embedding=None, updated_at=T0)
    recent = [
        graph.entity(f"Acme {i}", "thing", "", embedding=None, updated_at=T0 + timedelta(days=1, hours=i))
        for i in range(10)
    ]
    limits = DEFAULT_LIMITS.model_copy(
        update={"term_in_name_score": 4, "term_in_description_score": 3, "keyword_window": 10}
    )

    seeds = retrieved("acme paris?", limits=limits).keyword_seeds

    assert seeds == [older, *reversed(recent[1:])]
