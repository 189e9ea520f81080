"""The realistic world of the benchmarks in small (bench/realistic_world.py; the real ones are `make
bench-world`, `make bench-world-query` and `make bench-world-remember`): the generator's shape, and a
world of 300 facts loaded through the local API, remembered into and asked about as the benches do."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import realistic_world as bench
from remember_helpers import rule_based_model

FACTS = 300


def test_the_world_has_the_shape_of_a_real_users_history():
    world = bench.generate(2_000)
    shape = bench.shape(world)

    assert shape["facts"] == 2_000 and shape["entities"] == 200  # 10 entities per 100 facts
    assert all(len(text.split(". ")) == bench.FACTS_PER_TEXT for text in world.texts())
    firsts = Counter(person.first for person in world.people)
    assert len(firsts) <= len(bench.FIRST_NAMES) and firsts.most_common(1)[0][1] >= 10  # shared first names
    assert len({person.name for person in world.people}) == len(world.people)  # by different surnames
    hub_facts = sorted(sum(fact.target == hub for fact in world.facts) for hub in world.hubs)
    assert hub_facts[len(hub_facts) // 2] >= 24 and hub_facts[-1] >= 50  # hubs with dozens of facts
    assert {fact.relation for fact in world.facts} == {"lives_in", "works_at", "joined", "knows"}
    assert bench.generate(2_000) == world  # the same seed, the same world
    assert bench.questions(world) == bench.questions(bench.generate(2_000))
    assert len(bench.questions(world)) == 60
    assert not {(f.source, f.target) for f in bench.new_facts(world, 1)} & {
        (f.source, f.target) for f in world.facts
    }


def test_the_rule_based_model_extracts_every_fact_of_a_text():
    text = bench.generate(FACTS).texts()[0]
    body = {
        "messages": [{"content": f"<reference_time>2026-01-01</reference_time>\n<text>\n{text}\n</text>"}]
    }

    assert len(rule_based_model(body)["edges"]) == bench.FACTS_PER_TEXT


def test_a_small_world_loads_through_the_api_and_its_questions_find_their_facts(
    db, fake_anthropic, fake_openai
):
    from gligabao import bootstrap

    fake_anthropic.responder = rule_based_model
    world = bench.generate(FACTS)
    with bench.local_api(bootstrap.bundle(), workers=0) as (port, queue):
        loaded = bench.load(world, port, queue, "batch", anthropic=fake_anthropic)
        remembered = bench.remember_new_facts(bench.Client(port), world, 1, own_cluster=False)
        asked = bench.questions(world)[:15]  # 5 of each kind
        answers = bench.ask_all(port, fake_anthropic, asked, warm_up=1)

    assert (loaded.facts, loaded.texts) == (FACTS, FACTS // bench.FACTS_PER_TEXT) and loaded.seconds > 0
    assert loaded.llm_calls == loaded.texts + 1, loaded.line()  # 6 extract calls, the one window's resolve
    assert remembered.ms > 0 and remembered.round_trips > 0 and remembered.pg_cpu_s is None
    rows = bench.counts(db)
    assert (
        rows["edges"] == FACTS + bench.FACTS_PER_TEXT
        and rows["entities"] == world.entities()
        and rows["texts done"] == FACTS // bench.FACTS_PER_TEXT + 1
    )
    assert {answer.question.asked_by for answer in answers} == {"full name", "hub", "first name"}
    assert all(answer.ms > 0 for answer in answers)
    assert sum(answer.in_context for answer in answers) >= len(answers) // 2
