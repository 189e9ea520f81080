"""The read-back queries: one statement each (BEGIN, the statement, COMMIT), filtered by the
user in the SQL itself, and every superseder recorded when 50 facts are contradicted at once."""

from __future__ import annotations

import psycopg
import pytest
from graph_rows import add_artifact, add_dataset, add_entity, alice_works_at_acme
from psycopg.rows import dict_row
from remember_helpers import use_rule_based_model
from sql_counting import counting_round_trips

from gligabao import bootstrap
from gligabao.db import readback as rows
from gligabao.errors import NotFound
from gligabao.memory import readback
from gligabao.memory.remember import TextToRemember, remember_text


def test_each_read_back_is_one_statement_between_begin_and_commit(db):
    alice_works_at_acme(db)
    memory = bootstrap.bundle()
    readback.read_session(memory, "u1", "main", "a")  # the connection opened (and its types loaded)

    with counting_round_trips(this_thread_only=True) as session:
        page = readback.read_session(memory, "u1", "main", "a")
    with counting_round_trips(this_thread_only=True) as artifact:
        readback.read_artifact(memory, "u1", 1)
    with counting_round_trips(this_thread_only=True) as entity:
        timeline = readback.read_entity(memory, "u1", 1)

    assert [page.entities[0].name, timeline.entity.name] == ["Alice", "Alice"]
    assert (session.count, artifact.count, entity.count) == (3, 3, 3)


def test_the_queries_reach_no_row_of_another_users_dataset_by_id(db, admin_database_url):
    theirs = alice_works_at_acme(db, user_id="u2")
    add_dataset(db, "u1")

    # As the tables' owner, whom row-level security does not hold: the queries' own filters alone.
    with psycopg.connect(admin_database_url, autocommit=True, row_factory=dict_row) as conn:
        assert rows.artifact_rows(conn, user_id="u1", artifact_id=1) is None
        assert (
            rows.entity_rows(conn, user_id="u1", entity_id=1, after_valid_at="-infinity", after_id=0, take=9)
            is None
        )
        # even handed the other user's dataset id, the session query finds nothing
        found = rows.session_rows(
            conn,
            user_id="u1",
            dataset_id=theirs,
            session_id="a",
            after_artifact=0,
            after_entity=0,
            after_edge=0,
            take=9,
            preview_chars=9,
        )
        assert (found.artifacts, found.entities, found.edges) == ([], [], [])
        assert rows.artifact_rows(conn, user_id="u2", artifact_id=1).artifact.id == 1


def test_an_artifact_of_another_dataset_of_the_same_user_is_read_with_its_dataset(db):
    add_dataset(db, "u1")
    notes = add_dataset(db, "u1", "notes")
    artifact = add_artifact(db, notes, "Bob knows Carol.", session_id="s")
    add_entity(db, notes, "Bob")

    found = readback.read_artifact(bootstrap.bundle(), "u1", artifact)

    assert (found.artifact.dataset, found.artifact.text, found.artifact.status) == (
        "notes",
        "Bob knows Carol.",
        "done",
    )
    with pytest.raises(NotFound):
        readback.read_artifact(bootstrap.bundle(), "u2", artifact)


def test_fifty_contradicted_facts_each_record_their_superseder(db, fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    memory = bootstrap.bundle()
    remember_text(
        memory,
        TextToRemember("u1", "main", " ".join(f"Person{i} lives in City{i}." for i in range(50))),
    )

    moved = remember_text(
        memory,
        TextToRemember("u1", "main", " ".join(f"Person{i} moved to Town{i} in 2024." for i in range(50))),
    )

    superseders = dict(
        db.execute("SELECT id, superseded_by FROM gb_edges WHERE expired_at IS NOT NULL").fetchall()
    )
    new_edge_of = {edge.source: edge.id for edge in moved.edges}
    old_edges = db.execute(
        "SELECT g.id, s.name FROM gb_edges g JOIN gb_entities s ON s.id = g.source_id "
        "WHERE g.expired_at IS NOT NULL"
    ).fetchall()
    assert len(old_edges) == len(moved.superseded) == 50
    assert all(superseders[edge_id] == new_edge_of[person] for edge_id, person in old_edges)
