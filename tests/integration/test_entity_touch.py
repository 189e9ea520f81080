"""Touching a known entity (a remember that mentions it bumps its updated_at) writes no index
entry of gb_entities, so its unchanged vector is not inserted in the HNSW index again (migration
0009), nor of gb_entity_descriptions, so its description's grams are not written again (migration
0017); the recent-entities window follows the touch through gb_entity_recency, and the
description lookups through gb_entity_descriptions."""

from __future__ import annotations

import json

from remember_helpers import use_rule_based_model

from gligabao import bootstrap
from gligabao.db import graph_writes
from gligabao.db.connection import register_vector
from gligabao.memory.remember import TextToRemember, remember_text


def _remember(text: str):
    return remember_text(bootstrap.bundle(), TextToRemember(user_id="u1", dataset="main", text=text))


def updates_and_hot_updates(db) -> dict[str, tuple[int, int]]:
    """Per table, the rows the transaction updated so far, and how many of them HOT."""
    return {
        table: db.execute(
            "SELECT pg_stat_get_xact_tuples_updated(%s::regclass), pg_stat_get_xact_tuples_hot_updated(%s::regclass)",
            [table, table],
        ).fetchone()
        for table in ("gb_entities", "gb_entity_descriptions")
    }


def test_touching_a_known_entity_is_a_hot_update_that_writes_no_index_entry(db, fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    alice = next(e for e in _remember("Alice works at Acme.").entities if e.name == "Alice")
    dataset_id, vector = db.execute(
        "SELECT dataset_id, embedding FROM gb_entities WHERE id = %s", [alice.id]
    ).fetchone()

    register_vector(db)
    with db.transaction():
        db.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        graph_writes.upsert_entities(
            db,
            dataset_id,
            [graph_writes.EntityRow(alice.id, "Alice", "alice", "person", "", json.loads(vector))],
        )
        updates = updates_and_hot_updates(db)

    assert updates == {"gb_entities": (1, 1), "gb_entity_descriptions": (1, 1)}


def test_touching_many_known_entities_in_one_statement_is_all_hot_updates(db, fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    _remember(" ".join(f"Person{i} lives in City{i}." for i in range(50)))
    stored = db.execute(
        "SELECT id, dataset_id, name, normalized_name, type, embedding FROM gb_entities"
    ).fetchall()

    register_vector(db)
    with db.transaction():
        db.execute("SELECT set_config('gligabao.user_id', 'u1', true)")
        graph_writes.upsert_entities(
            db,
            stored[0][1],
            [
                graph_writes.EntityRow(id_, name, normalized, type_, "", json.loads(vector))
                for id_, _, name, normalized, type_, vector in stored
            ],
        )
        updates = updates_and_hot_updates(db)

    assert updates == {"gb_entities": (100, 100), "gb_entity_descriptions": (100, 100)}


def test_the_recent_entities_follow_a_touch_through_the_recency_table(db, fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    _remember("Alice works at Acme.")
    _remember("Bob lives in Paris.")
    _remember("Alice knows Carol.")  # touches Alice again

    newest = db.execute(
        """SELECT e.name FROM gb_entity_recency r JOIN gb_entities e ON e.id = r.entity_id
           ORDER BY r.updated_at DESC, r.entity_id DESC LIMIT 2"""
    ).fetchall()
    same = db.execute(
        "SELECT count(*) FROM gb_entities e JOIN gb_entity_recency r ON r.entity_id = e.id AND r.updated_at = e.updated_at"
    ).fetchone()[0]

    assert sorted(name for (name,) in newest) == ["Alice", "Carol"]
    assert same == db.execute("SELECT count(*) FROM gb_entities").fetchone()[0] == 5


def test_the_description_lookups_follow_every_write_of_an_entity(db, fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    _remember("Alice works at Acme.")
    _remember("Bob lives in Paris.")
    _remember("Alice knows Carol.")  # touches Alice
    db.execute("UPDATE gb_entities SET description = 'Runs the BANK of Paris' WHERE name = 'Bob'")
    db.execute("DELETE FROM gb_entities WHERE name = 'Carol'")

    mirrored = db.execute(
        """SELECT e.name FROM gb_entities e JOIN gb_entity_descriptions d ON d.entity_id = e.id
           WHERE (d.dataset_id, d.updated_at, d.lower_description) = (e.dataset_id, e.updated_at, lower(e.description))
           ORDER BY e.name"""
    ).fetchall()
    bob = db.execute(
        "SELECT lower_description FROM gb_entity_descriptions d JOIN gb_entities e ON e.id = d.entity_id WHERE e.name = 'Bob'"
    ).fetchone()

    assert [name for (name,) in mirrored] == ["Acme", "Alice", "Bob", "Paris"]
    assert db.execute("SELECT count(*) FROM gb_entity_descriptions").fetchone()[0] == 4
    assert bob == ("runs the bank of paris",)
