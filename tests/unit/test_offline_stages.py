"""The offline LLM's other stages and the offline embeddings, on the product's own prompts: a
resolution from the resolve prompt's lines, an answer from the query prompt's context, vectors
that are the same everywhere and near for shared words; and what it refuses."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from gligabao.ai.offline.embeddings import OfflineEmbedder, hashed_vector
from gligabao.ai.offline.llm import OfflineLLM
from gligabao.ai.prompts.extract import ChunkExtraction, extract_prompt
from gligabao.ai.prompts.query import QueryReply, query_prompt
from gligabao.ai.prompts.resolve import (
    FactLine,
    Resolution,
    SaidFact,
    WindowResolution,
    resolve_prompt,
    window_resolve_prompt,
)
from gligabao.errors import NotConfigured
from gligabao.memory.retrieval import Context
from gligabao.model import StoredEdge, StoredEntity
from gligabao.observability.inferences import CallContext

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def complete(system: str, content, reply_model, stage: str = "resolve"):
    call = CallContext(user_id="u1", type="remember")
    reply = OfflineLLM().complete(call, stage, system=system, content=content, reply_model=reply_model)
    return reply, call


def line(key: int, source: str, relation: str, target: str, description: str = "", **times) -> FactLine:
    return FactLine(
        key, source, relation, target, description, times.get("valid_at"), times.get("invalid_at")
    )


def test_a_new_place_contradicts_the_stored_one_and_a_restated_fact_is_its_duplicate():
    new = [
        line(0, "Alice", "lives_in", "Lyon", "Alice lives in Lyon."),
        line(1, "Alice", "works_at", "Acme", "Alice works at Acme."),
        line(2, "Alice", "works_at", "Globex", "Alice works at Globex."),
    ]
    stored = [
        line(10, "Alice", "lives_in", "Paris", "Alice lives in Paris.", valid_at=NOW),
        line(11, "Alice", "works_at", "Acme", "Alice works at Acme."),
        line(12, "Bob", "lives_in", "Rome"),
    ]
    reply, call = complete(*resolve_prompt(new, stored, reference_time=NOW, current_time=NOW), Resolution)

    assert [d.model_dump() for d in reply.facts] == [
        {"fact": 0, "duplicate_of": None, "contradicts": [10]},
        {"fact": 1, "duplicate_of": 11, "contradicts": []},
    ]  # a second job is not a contradiction: nothing says Alice left Acme
    [inference] = call.inferences
    assert (inference.stage, inference.model, inference.cost_usd, inference.ok) == (
        "resolve",
        "offline",
        0.0,
        True,
    )


def test_a_job_said_with_now_supersedes_and_an_ended_fact_contradicts_nothing():
    new = [
        line(0, "Alice", "works_at", "Globex", "Alice now works at Globex."),
        line(1, "Alice", "lives_in", "Rome", "Alice lived in Rome.", invalid_at=NOW),
    ]
    stored = [line(11, "Alice", "works_at", "Acme"), line(10, "Alice", "lives_in", "Paris")]
    reply, _ = complete(*resolve_prompt(new, stored, reference_time=NOW, current_time=NOW), Resolution)

    assert [d.model_dump() for d in reply.facts] == [{"fact": 0, "duplicate_of": None, "contradicts": [11]}]


def test_a_window_judges_each_new_fact_against_the_earlier_ones_too():
    said = [
        SaidFact(line(0, "Alice", "lives_in", "Paris"), NOW),
        SaidFact(line(1, "Alice", "lives_in", "Lyon"), NOW),
        SaidFact(line(2, "Alice", "lives_in", "Lyon"), NOW),
    ]
    reply, _ = complete(*window_resolve_prompt(said, [], current_time=NOW), WindowResolution)

    decisions = {d.fact: (d.duplicate_of_new, d.contradicts_new) for d in reply.facts}
    assert decisions == {1: (None, [0]), 2: (1, [0])}


def context() -> Context:
    return Context(
        dataset_id=1,
        entities=[
            StoredEntity(1, "Alice", "person", ""),
            StoredEntity(2, "Acme", "organization", ""),
            StoredEntity(3, "Paris", "place", ""),
            StoredEntity(4, "Lyon", "place", ""),
        ],
        edges=[
            StoredEdge(5, 1, 2, "works_at", "Alice works at Acme.", None, None, None, NOW),
            StoredEdge(6, 1, 3, "lives_in", "Alice lives in Paris.", None, None, NOW, NOW),
            StoredEdge(7, 1, 4, "lives_in", "Alice moved to Lyon.", None, NOW, None, NOW),
        ],
    )


def test_an_answer_is_the_best_matching_live_fact_with_its_ids():
    reply, _ = complete(*query_prompt(context(), "Where does Alice live?", NOW), QueryReply, "query")

    assert reply.model_dump() == {
        "answer": "Alice moved to Lyon.",
        "entities": [1, 4],
        "edges": [7],
        "passages": [],
    }


def test_a_question_about_the_past_may_use_an_ended_fact_and_nothing_matching_says_so():
    past, _ = complete(*query_prompt(context(), "Where did Alice live before?", NOW), QueryReply, "query")
    nothing, _ = complete(*query_prompt(context(), "What is Bob's favourite food?", NOW), QueryReply, "query")

    assert 6 in past.edges
    assert nothing.model_dump() == {
        "answer": "Nothing in memory answers that.",
        "entities": [],
        "edges": [],
        "passages": [],
    }


def test_a_chunk_gets_a_summary_and_an_image_or_an_unknown_stage_is_a_503():
    system, content = extract_prompt(
        "Alice works at Acme.", reference_time=NOW, current_time=NOW, chunk=(0, 2)
    )
    chunk, _ = complete(system, content, ChunkExtraction, "extract")
    assert (chunk.summary, [e.relation for e in chunk.edges]) == ("Alice works at Acme.", ["works_at"])

    with pytest.raises(NotConfigured) as image:
        complete("", [{"type": "image"}], ChunkExtraction, "image")
    with pytest.raises(NotConfigured) as judge:
        complete("", "<question>x</question>", StoredEntity, "judge")
    assert image.value.status == judge.value.status == 503
    assert "ANTHROPIC_API_KEY" in image.value.message
    assert judge.value.message == "the offline LLM has no rule for the judge stage (set ANTHROPIC_API_KEY)"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_offline_vectors_are_unit_length_deterministic_and_near_for_shared_words():
    married = hashed_vector("Alice is married to Bob", 1536)
    marriage = hashed_vector("Who is Alice's husband? married", 1536)
    unrelated = hashed_vector("The museum closes at noon", 1536)

    assert math.isclose(sum(x * x for x in married), 1.0)
    assert married == hashed_vector("Alice is married to Bob", 1536)
    assert cosine(married, marriage) > 0.3 > cosine(married, unrelated)
    assert hashed_vector("", 8) == [1.0, 0, 0, 0, 0, 0, 0, 0]
    # The same vector in any process: the digest is BLAKE2, not Python's salted hash.
    assert [round(x, 6) for x in hashed_vector("Paris", 4)] == FIXED_PARIS


FIXED_PARIS = [0.0, 0.857493, -0.514496, 0.0]  # computed once; a change of the hashing changes it


def test_the_embedder_records_one_offline_inference_per_request():
    call = CallContext(user_id="u1", type="query")
    vectors = OfflineEmbedder(16).embed(call, ["a text", "another"])

    assert [len(v) for v in vectors] == [16, 16]
    [inference] = call.inferences
    assert (inference.model, inference.cost_usd, inference.input_tokens) == ("offline-hash", 0.0, 0)


def test_the_relation_a_question_names_outweighs_a_bare_where():
    work, _ = complete(*query_prompt(context(), "Where does Alice work?", NOW), QueryReply, "query")

    assert (work.answer, work.edges) == ("Alice works at Acme.", [5])
