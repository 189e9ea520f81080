"""Cost is a feature (issue 3, point 7): at most 2 LLM calls and 1 embeddings request per
unchunked text, and SQL round trips that do not grow with the facts extracted; each call is
recorded with its cost, its prompt cache priced (issue 39, point 3)."""

from __future__ import annotations

import pytest
from fakes.anthropic_server import Reply
from ontology_helpers import register
from remember_helpers import chain_text, rule_based_model, stage_of, stages_called, use_rule_based_model
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
    # The ontology's read, the candidates' (resolve), BEGIN with the dataset's lock, then the store
    # read, planned and applied: the artifacts with the facts' history, the entities with the new
    # edges' ids, the plan's writes with the COMMIT (9 before the plan, which read and wrote in turns).
    figures = run(*models, facts=50) + run(*models, facts=1)

    assert max(f["round_trips"] for f in figures) <= 8, figures


def test_a_dataset_with_an_ontology_costs_no_more_round_trips(api, db, models):
    """The ontology is read in the remember's first round trip, whether the dataset has one or not."""
    register(api, dataset="facts-50", out_of_ontology="map")
    register(api, name="people-1", dataset="facts-1", out_of_ontology="map")

    figures = run(*models, facts=50) + run(*models, facts=1)

    attached = db.execute(
        "SELECT name FROM gb_datasets WHERE ontology_id IS NOT NULL ORDER BY name"
    ).fetchall()
    assert [row[0] for row in attached] == ["facts-1", "facts-50"]
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


def test_the_recorded_cost_of_a_call_prices_the_cache_as_the_gligabao_server_does(
    db, fake_anthropic, fake_openai
):
    """Issue 39, point 3: an extraction that wrote and read the prompt cache, and one whose input
    (its cache included) is above claude-haiku-5-5's long-context threshold of 100,000 tokens."""
    usages = iter(
        [
            # 1200 x 0.10 + 2000 x 0.125 + 50000 x 0.01 + 300 x 0.50 = 1020 USD per million
            {
                "input_tokens": 1200,
                "output_tokens": 300,
                "cache_creation_input_tokens": 2000,
                "cache_read_input_tokens": 50000,
            },
            # 90000 + 20000 > 100000: 90000 x 0.50 + 20000 x 0.01 + 300 x 2.50 = 45950 USD per million
            {"input_tokens": 90000, "output_tokens": 300, "cache_read_input_tokens": 20000},
        ]
    )

    def model(body: dict) -> Reply:
        reply = rule_based_model(body)
        return Reply(data=reply, usage=next(usages)) if stage_of(body) == "extract" else reply

    fake_anthropic.responder = model
    for text in ("Alice works at Acme.", "Bob lives in Paris."):
        remember_text(bootstrap.bundle(), TextToRemember(user_id="u1", dataset="cache", text=text))

    rows = db.execute(
        "SELECT model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, cost_usd::float8"
        " FROM gb_inferences WHERE stage = 'extract' ORDER BY id"
    ).fetchall()
    assert rows == [
        ("claude-haiku-5-5", 53200, 300, 2000, 50000, 0.00102),
        ("claude-haiku-5-5", 110000, 300, 0, 20000, 0.04595),
    ]
    embeddings = db.execute(
        "SELECT model, input_tokens, cost_usd::float8 FROM gb_inferences WHERE stage = 'embed' ORDER BY id"
    ).fetchall()
    assert embeddings and all(
        model == "text-embedding-3-small" and cost == round(tokens * 0.02 / 1_000_000, 8)
        for model, tokens, cost in embeddings
    )
