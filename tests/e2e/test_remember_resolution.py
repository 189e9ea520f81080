"""Resolution (SPEC section 5, steps 5 and 6): entities by normalized name, else by a vector
cosine >= 0.75 between names that could be one entity's; facts restated without the LLM, the rest judged by at most one `resolve` call
against at most 50 live candidate edges."""

from __future__ import annotations

import re

from conftest import count_rows
from graph_rows import add_dataset, add_edge, add_entity
from remember_helpers import (
    extraction_reply,
    prompt_of,
    remember,
    stage_of,
    stages_called,
    unit,
    use_rule_based_model,
    with_cosine,
)


def stored_facts_of(body: dict) -> list[int]:
    return [int(i) for i in re.findall(r"^\[id (\d+)\]", prompt_of(body), re.MULTILINE)]


def resolve_requests(fake_anthropic) -> list[dict]:
    return [body for body in fake_anthropic.messages if stage_of(body) == "resolve"]


def reset_calls(fake_anthropic, fake_openai) -> None:
    fake_anthropic.requests.clear()
    fake_openai.requests.clear()


# --- entities


def test_an_entity_with_the_same_normalized_name_is_the_stored_one(api, db, models):
    first = remember(api, "Alice works at Acme.")

    second = remember(api, "ALICE lives in Paris.")

    alice = second["entities"][0]
    assert (alice["id"], alice["name"], alice["created"]) == (first["entities"][0]["id"], "Alice", False)
    assert count_rows(db, "gb_entities") == 3


def test_an_entity_whose_vector_has_cosine_075_with_a_stored_one_is_that_one(api, db, models):
    _, fake_openai = models
    fake_openai.override("Alice Smith (person): ", unit(0))
    fake_openai.override("Smith (person): ", with_cosine(0.76))
    first = remember(api, "Alice Smith works at Acme.")

    second = remember(api, "Smith lives in Paris.")

    smith = second["entities"][0]
    assert (smith["id"], smith["name"], smith["created"]) == (
        first["entities"][0]["id"],
        "Alice Smith",
        False,
    )
    assert second["edges"][0]["source"] == "Alice Smith"
    assert db.execute("SELECT count(*) FROM gb_entities WHERE name LIKE '%%Smith'").fetchone()[0] == 1


def test_an_entity_below_cosine_075_is_a_new_one(api, db, models):
    _, fake_openai = models
    fake_openai.override("Alice Smith (person): ", unit(0))
    fake_openai.override("Smith (person): ", with_cosine(0.74))
    remember(api, "Alice Smith works at Acme.")

    second = remember(api, "Smith lives in Paris.")

    assert second["entities"][0]["created"] is True
    assert db.execute("SELECT count(*) FROM gb_entities WHERE name LIKE '%%Smith'").fetchone()[0] == 2


def test_the_best_vector_match_wins(api, db, models):
    _, fake_openai = models
    fake_openai.override("Alice Smith (person): ", with_cosine(0.8))
    fake_openai.override("Bob Smith (person): ", with_cosine(0.9))
    fake_openai.override("Smith (person): ", unit(0))
    remember(api, "Alice Smith knows Bob Smith.")

    second = remember(api, "Smith lives in Paris.")

    assert second["entities"][0]["name"] == "Bob Smith"


def test_entity_vectors_of_another_dataset_never_match(api, db, models):
    _, fake_openai = models
    fake_openai.override("Alice Smith (person): ", unit(0))
    fake_openai.override("Smith (person): ", unit(0))
    remember(api, "Alice Smith works at Acme.", dataset="other")

    second = remember(api, "Smith lives in Paris.")

    assert second["entities"][0]["created"] is True


def test_a_matched_entity_gets_an_empty_description_filled_and_updated_at_bumped(api, db, models):
    remember(api, "Alice works at Acme.")
    before = db.execute("SELECT updated_at FROM gb_entities WHERE name = 'Alice'").fetchone()[0]

    body = remember(api, "Alice is an engineer. Alice lives in Paris.")

    assert body["entities"][0]["description"] == "engineer"
    description, updated_at = db.execute(
        "SELECT description, updated_at FROM gb_entities WHERE name = 'Alice'"
    ).fetchone()
    assert description == "engineer" and updated_at > before


def test_a_matched_entity_keeps_its_description(api, db, models):
    remember(api, "Alice is an engineer.")

    body = remember(api, "Alice is a pilot.")

    assert body["entities"][0]["description"] == "engineer"


# --- facts


def test_a_restatement_needs_no_llm(api, db, models):
    fake_anthropic, fake_openai = models
    first = remember(api, "Alice works at Acme.")
    reset_calls(fake_anthropic, fake_openai)

    body = remember(api, "Alice works at Acme.")

    assert stages_called(fake_anthropic) == ["extract"]
    assert [(e["id"], e["created"]) for e in body["edges"]] == [(first["edges"][0]["id"], False)]
    assert count_rows(db, "gb_edges") == 1


def test_no_resolve_call_without_candidate_edges(api, db, models):
    fake_anthropic, fake_openai = models
    remember(api, "Alice works at Acme.")
    reset_calls(fake_anthropic, fake_openai)

    remember(api, "Bob knows Carol.")

    assert stages_called(fake_anthropic) == ["extract"]


def test_edges_around_the_facts_entities_are_candidates(api, db, models):
    fake_anthropic, fake_openai = models
    works = remember(api, "Alice works at Acme. Bob knows Carol.")["edges"][0]["id"]
    reset_calls(fake_anthropic, fake_openai)

    remember(api, "Alice lives in Paris.")

    [request] = resolve_requests(fake_anthropic)
    assert stored_facts_of(request) == [works]
    assert "[0] Alice lives_in Paris" in prompt_of(request)


def test_edges_with_a_similar_vector_are_candidates(api, db, models):
    fake_anthropic, fake_openai = models
    fake_openai.override("Alice works_at Acme: Alice works at Acme.", unit(0))
    fake_openai.override("Bob knows Carol: Bob knows Carol.", with_cosine(0.8))
    works = remember(api, "Alice works at Acme.")["edges"][0]["id"]
    reset_calls(fake_anthropic, fake_openai)

    remember(api, "Bob knows Carol.")

    [request] = resolve_requests(fake_anthropic)
    assert stored_facts_of(request) == [works]


def test_candidates_are_live_edges_only(api, db, models):
    fake_anthropic, fake_openai = models
    paris = remember(api, "Alice lives in Paris.")["edges"][0]["id"]
    lyon = remember(api, "Alice moved to Lyon in 2024.")["edges"][0]["id"]  # supersedes Paris
    reset_calls(fake_anthropic, fake_openai)

    remember(api, "Alice works at Acme.")

    [request] = resolve_requests(fake_anthropic)
    assert stored_facts_of(request) == [lyon] and paris != lyon


def test_candidates_are_at_most_50_the_most_similar_first(api, db, models):
    fake_anthropic, fake_openai = models
    fake_openai.override("Alice works_at Acme: Alice works at Acme.", unit(0))
    fake_openai.override("Alice knows Person59: Alice knows Person59.", with_cosine(0.9))
    remember(api, " ".join(f"Alice knows Person{i}." for i in range(60)))
    closest = db.execute(
        "SELECT e.id FROM gb_edges e JOIN gb_entities t ON t.id = e.target_id WHERE t.name = 'Person59'"
    ).fetchone()[0]
    reset_calls(fake_anthropic, fake_openai)

    remember(api, "Alice works at Acme.")

    [request] = resolve_requests(fake_anthropic)
    shown = stored_facts_of(request)
    assert len(shown) == 50 and shown[0] == closest


def test_the_resolve_prompt_states_the_reply_and_the_rules(api, db, models):
    fake_anthropic, fake_openai = models
    remember(api, "Alice lives in Paris.")
    reset_calls(fake_anthropic, fake_openai)

    remember(api, "Alice lives in Lyon.", reference_time="2025-01-31T09:00:00Z")

    [request] = resolve_requests(fake_anthropic)
    system = request["system"] if isinstance(request["system"], str) else request["system"][0]["text"]
    assert '"duplicate_of"' in system and '"contradicts"' in system
    assert "<reference_time>2025-01-31T09:00:00Z</reference_time>" in prompt_of(request)


def test_ids_the_llm_names_outside_the_candidates_are_ignored(api, db, fake_anthropic, fake_openai):
    other = add_dataset(db, "u1", "other")
    foreign = add_edge(db, other, add_entity(db, other, "Zed"), add_entity(db, other, "Zoo"), "lives_in")
    use_rule_based_model(fake_anthropic)
    paris = remember(api, "Alice lives in Paris.")["edges"][0]["id"]

    def resolver_naming_foreign_ids(body):
        if stage_of(body) == "extract":
            return extraction_reply(body)
        return {"facts": [{"fact": 0, "duplicate_of": foreign, "contradicts": [foreign, 99999]}]}

    fake_anthropic.responder = resolver_naming_foreign_ids

    body = remember(api, "Alice lives in Lyon.")

    assert body["superseded"] == [] and body["edges"][0]["created"] is True
    assert db.execute(
        "SELECT expired_at FROM gb_edges WHERE id IN (%s, %s)", [foreign, paris]
    ).fetchall() == [(None,), (None,)]


def test_a_text_never_supersedes_an_edge_it_restates(api, db, fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    remember(api, "Alice works at Acme.")
    works = db.execute("SELECT id FROM gb_edges").fetchone()[0]

    def contradict_everything(body):
        if stage_of(body) == "extract":
            return extraction_reply(body)
        return {"facts": [{"fact": 1, "contradicts": [works]}]}

    fake_anthropic.responder = contradict_everything

    body = remember(api, "Alice works at Acme. Alice lives in Paris.")

    assert body["superseded"] == []
    assert db.execute("SELECT expired_at FROM gb_edges WHERE id = %s", [works]).fetchone() == (None,)


def test_two_names_of_one_entity_state_one_fact(api, db, models):
    _, fake_openai = models
    fake_openai.override("Alice Smith (person): ", unit(0))
    fake_openai.override("Smith (person): ", unit(0))
    remember(api, "Alice Smith lives in Paris.")

    body = remember(api, "Smith works at Acme. Alice Smith works at Acme.")

    assert len(body["edges"]) == 1 and len(body["entities"]) == 2
    assert count_rows(db, "gb_edges") == 2
