"""Concurrent remembers of one dataset (issue 3, point 4): one row per entity, no deadlock,
no lost link.

The remembers run in 16 threads of this process, each with its own database connection (the
connection is per thread), through `remember_text`, what the handler calls. Not through the
handler itself: Powertools keeps the current event in a class attribute, so one process cannot
resolve two events at once (Lambda never does; each invocation has its environment to itself).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

import psycopg
import pytest
from conftest import count_rows
from remember_helpers import use_rule_based_model

WRITERS = 16


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    return fake_anthropic, fake_openai


def remember_together(bodies: list[dict]) -> list[dict]:
    """Remember the texts at the same moment, one thread (and database connection) each."""
    from gligabao import bootstrap
    from gligabao.memory.remember import TextToRemember, remember_text

    deps = bootstrap.bundle()
    start = threading.Barrier(len(bodies))

    def remember(body):
        request = TextToRemember(**{"user_id": "u1", "dataset": "main", **body})
        start.wait()
        try:
            return asdict(remember_text(deps, request))
        finally:
            deps.database.close()

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(remember, bodies))


def test_16_concurrent_remembers_of_the_same_new_facts_end_in_one_graph(db, models):
    replies = remember_together(
        [{"dataset": "fresh", "text": "Alice works at Acme.", "session_id": f"s{i}"} for i in range(WRITERS)]
    )

    assert count_rows(db, "gb_datasets") == 1
    assert db.execute("SELECT name FROM gb_entities ORDER BY name").fetchall() == [("Acme",), ("Alice",)]
    assert count_rows(db, "gb_edges") == 1
    assert count_rows(db, "gb_artifacts") == WRITERS
    assert count_rows(db, "gb_entity_artifacts") == 2 * WRITERS
    assert count_rows(db, "gb_edge_artifacts") == WRITERS
    assert count_rows(db, "gb_entity_sessions") == 2 * WRITERS
    assert count_rows(db, "gb_edge_sessions") == WRITERS
    assert sorted(s for (s,) in db.execute("SELECT DISTINCT session_id FROM gb_edge_sessions")) == sorted(
        f"s{i}" for i in range(WRITERS)
    )
    created = [e["name"] for r in replies for e in r["entities"] if e["created"]]
    assert sorted(created) == ["Acme", "Alice"]
    assert sum(e["created"] for r in replies for e in r["edges"]) == 1
    assert len({r["edges"][0]["id"] for r in replies}) == 1


def test_16_concurrent_remembers_naming_one_entity_lose_no_link(db, models):
    remember_together(
        [
            {"text": f"Alice knows Person{i}. Person{i} knows Alice.", "session_id": f"s{i}"}
            for i in range(WRITERS)
        ]
    )

    alice = db.execute("SELECT id FROM gb_entities WHERE normalized_name = 'alice'").fetchall()
    assert len(alice) == 1
    assert count_rows(db, "gb_entities") == WRITERS + 1
    assert count_rows(db, "gb_edges") == 2 * WRITERS
    assert (
        db.execute("SELECT count(*) FROM gb_entity_sessions WHERE entity_id = %s", alice[0]).fetchone()[0]
        == WRITERS
    )
    assert (
        db.execute("SELECT count(*) FROM gb_entity_artifacts WHERE entity_id = %s", alice[0]).fetchone()[0]
        == WRITERS
    )
    assert count_rows(db, "gb_edge_sessions") == 2 * WRITERS


def test_concurrent_entity_upserts_make_one_row_without_the_dataset_lock(db, database_url):
    """The unique constraint and the upsert alone already keep one row per name."""
    from pgvector.psycopg import register_vector
    from psycopg.rows import dict_row

    from gligabao.db import graph_writes

    dataset_id = db.execute(
        "INSERT INTO gb_datasets (user_id, name) VALUES ('u1', 'main') RETURNING id"
    ).fetchone()[0]
    names = ["Acme", "Alice", "Bob", "Paris"]
    start = threading.Barrier(WRITERS)

    def upsert(i):
        rows = [
            graph_writes.EntityRow(None, name, name.lower(), "person", f"seen by {i}", [1.0] * 1536)
            for name in (names if i % 2 else reversed(names))
        ]
        with psycopg.connect(database_url, row_factory=dict_row) as conn:
            register_vector(conn)
            start.wait()
            with conn.transaction():
                conn.execute("SELECT set_config('gligabao.user_id', 'u1', true)")  # row-level security
                return graph_writes.upsert_entities(conn, dataset_id, rows)

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        results = list(pool.map(upsert, range(WRITERS)))

    assert count_rows(db, "gb_entities") == len(names)
    assert sum(entity.created for entities in results for entity in entities) == len(names)
    ids = {entity.name: entity.id for entities in results for entity in entities}
    assert len(ids) == len(names) and len(set(ids.values())) == len(names)
