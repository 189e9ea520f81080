"""The retrieval-quality benchmark in small (bench/retrieval_quality.py; the real one is `make
bench-retrieval-quality`): a twentieth of its world remembered through the real pipeline with its
scripted extractions, the tests' fake embedder instead of the sentence model, every question asked
with both retrievals. It keeps the benchmark working and holds the ranked context to its budget."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gligabao import bootstrap
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.remember import TextToRemember, remember_text

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import retrieval_quality as bench
from retrieval_chains_world import build_chains_world
from retrieval_world import build_world


def remembered(world, admin_database_url, fake_anthropic, fake_openai):
    """The world remembered through the real pipeline: (memory, gold facts, gold passages, the
    questions' vectors by the fake embedder)."""
    fake_anthropic.responder = bench.ScriptedModel(world)
    memory = bootstrap.bundle()
    for text in sorted(world.texts, key=lambda text: text.reference_time):
        remember_text(
            memory, TextToRemember(bench.USER, bench.DATASET, text.text, reference_time=text.reference_time)
        )
    gold_facts, gold_passages = bench.gold_ids(admin_database_url, world)
    vectors = [fake_openai.vector(question.text) for question in world.questions]
    return memory, gold_facts, gold_passages, vectors


def test_the_benchmark_world_is_remembered_and_the_ranked_context_keeps_its_gold_within_budget(
    db, admin_database_url, fake_anthropic, fake_openai
):
    world = build_world(scale=0.05)
    memory, gold_facts, gold_passages, vectors = remembered(
        world, admin_database_url, fake_anthropic, fake_openai
    )

    results = {
        mode: bench.ask_all(
            memory,
            world,
            vectors,
            DEFAULT_LIMITS.model_copy(update={"retrieval": mode}),
            gold_facts,
            gold_passages,
        )
        for mode in ("seed", "ranked")
    }

    seed, ranked = (bench.summary(results[mode]) for mode in ("seed", "ranked"))
    assert (
        db.execute("SELECT count(*) FROM gb_edges WHERE expired_at IS NOT NULL").fetchone()[0] > 0
    )  # supersessions
    assert sum(bool(ids) for ids in gold_facts.values()) >= 0.8 * len(gold_facts)  # the gold is stored
    assert all(ids for ids in gold_passages.values())  # each needle is in a chunk
    # the ranked context stays within its budget (the benchmark counts the four tag lines too)
    assert max(result["tokens"] for result in results["ranked"]) <= DEFAULT_LIMITS.context_token_budget + 16
    assert ranked["tokens_p95"] < seed["tokens_p95"]
    assert ranked["recall"] >= seed["recall"] - 0.1
    assert {"direct", "multi_hop", "namesake", "passage", "unanswerable", "overall"} <= bench.by_category(
        results["ranked"]
    ).keys()


def test_the_chains_world_is_remembered_and_its_questions_of_two_and_three_hops_are_asked(
    db, admin_database_url, fake_anthropic, fake_openai
):
    world = build_chains_world(scale=0.1)
    memory, gold_facts, gold_passages, vectors = remembered(
        world, admin_database_url, fake_anthropic, fake_openai
    )

    results = bench.ask_all(memory, world, vectors, DEFAULT_LIMITS, gold_facts, gold_passages)
    table = bench.by_category(results)

    assert all(ids for ids in gold_facts.values())  # every fact of every chain is stored
    assert {"direct", "current_state", "multi_hop", "multi_hop_3", "multi_hop_all"} <= table.keys()
    assert table["multi_hop_3"]["questions"] >= 4
    assert max(result["tokens"] for result in results) <= DEFAULT_LIMITS.context_token_budget + 16


@pytest.mark.parametrize("name", ["family", "business"])
def test_the_independently_written_worlds_are_remembered_and_every_shape_is_asked_within_budget(
    name, db, admin_database_url, fake_anthropic, fake_openai
):
    world = bench.build_named_world(name, scale=0.1)
    memory, gold_facts, gold_passages, vectors = remembered(
        world, admin_database_url, fake_anthropic, fake_openai
    )

    results = bench.ask_all(memory, world, vectors, DEFAULT_LIMITS, gold_facts, gold_passages)
    table = bench.by_category(results)

    assert sum(bool(ids) for ids in gold_facts.values()) >= 0.9 * len(gold_facts)  # the gold is stored
    assert {"paraphrased_role", "multi_hop", "multi_hop_3", "namesake", "current_state"} <= table.keys()
    assert all(table[shape]["questions"] >= 4 for shape in ("paraphrased_role", "multi_hop", "multi_hop_3"))
    assert db.execute("SELECT count(*) FROM gb_edges WHERE expired_at IS NOT NULL").fetchone()[0] > 0
    assert max(result["tokens"] for result in results) <= DEFAULT_LIMITS.context_token_budget + 16
