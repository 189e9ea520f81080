"""Cost is a feature (issue 3, point 7): at most 2 LLM calls and 1 embeddings request per
unchunked text, and SQL round trips that do not grow with the facts extracted."""

from __future__ import annotations

import pytest
from remember_helpers import chain_text, stages_called, use_rule_based_model
from sql_counting import counting_round_trips

from gligabao import bootstrap
from gligabao.ai.prompts.extract import Extraction
from gligabao.memory.facts import FactsToRemember, remember_facts
from gligabao.memory.remember import TextToRemember, remember_text


def scenario(facts: int) -> list[tuple[str, str]]:
    """Three remembers of `facts` facts each: into a new dataset; new facts about stored entities
    (judged by the resolve stage); facts contradicting those (superseding them)."""
    return [
        ("new dataset", chain_text(facts)),
        ("new facts", " ".join(f"Person{i} lives in City{i}." for i in range(facts))),
        ("contradictions", " ".join(f"Person{i} moved to Town{i} in 2024." for i in range(facts))),
    ]


def run(fake_anthropic, fake_openai, facts: int) -> list[dict]:
    with bootstrap.bundle().database.transaction("u1"):
        pass  # the connection is opened (and its types registered) before anything is counted
    figures = []
    for step, text in scenario(facts):
        fake_anthropic.requests.clear()
        fake_openai.requests.clear()
        with counting_round_trips() as round_trips:
            body = remember_text(
                bootstrap.bundle(),
                TextToRemember(user_id="u1", dataset=f"facts-{facts}", text=text, session_id="s"),
            )
        figures.append(
            {
                "step": step,
                "round_trips": round_trips.count,
                "stages": stages_called(fake_anthropic),
                "embedding_requests": len(fake_openai.embedding_requests),
                "edges": len(body.edges),
                "superseded": len(body.superseded),
            }
        )
    return figures


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    return fake_anthropic, fake_openai


def test_sql_round_trips_are_the_same_for_1_and_50_facts(db, models):
    one, fifty = run(*models, facts=1), run(*models, facts=50)

    assert [f["edges"] for f in fifty] == [50, 50, 50] and [f["superseded"] for f in fifty] == [0, 0, 50]
    assert [f["edges"] for f in one] == [1, 1, 1] and [f["superseded"] for f in one] == [0, 0, 1]
    assert [f["round_trips"] for f in one] == [f["round_trips"] for f in fifty]


def test_at_most_two_llm_calls_and_one_embeddings_request_per_text(db, models):
    figures = run(*models, facts=50)

    assert [f["stages"] for f in figures] == [["extract"], ["extract", "resolve"], ["extract", "resolve"]]
    assert [f["embedding_requests"] for f in figures] == [1, 1, 1]


def test_a_remember_costs_at_most_8_sql_round_trips_whatever_the_facts(db, models):
    figures = run(*models, facts=50) + run(*models, facts=1)

    assert max(f["round_trips"] for f in figures) <= 8, figures


def _facts(people: int, place: str) -> FactsToRemember:
    extraction = Extraction(
        entities=[
            *({"name": f"Person{i}", "type": "person"} for i in range(people)),
            *({"name": f"{place}{i}", "type": "place"} for i in range(people)),
        ],
        edges=[
            {"source": f"Person{i}", "target": f"{place}{i}", "relation": "lives_in"} for i in range(people)
        ],
    )
    return FactsToRemember(
        user_id="u1",
        dataset="own-facts",
        facts=extraction,
        given=extraction.model_dump_json(),
        session_id="s",
    )


def test_a_remember_of_the_callers_facts_costs_the_round_trips_of_a_text(db, models):
    fake_anthropic, _ = models
    with bootstrap.bundle().database.transaction("u1"):
        pass  # the connection is opened (and its types registered) before anything is counted
    counts = []
    for place in ("City", "Town"):  # into a new dataset, then about known entities
        with counting_round_trips() as round_trips:
            remember_facts(bootstrap.bundle(), _facts(20, place))
        counts.append(round_trips.count)

    assert "extract" not in stages_called(fake_anthropic)
    assert counts[0] <= 7 and counts[1] <= 8, counts
