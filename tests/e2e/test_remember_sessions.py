"""Sessions and provenance links, exactly as seeds/sessions.md says."""

from __future__ import annotations

from conftest import count_rows
from remember_helpers import remember


def names_and_sessions(db, table: str) -> list[tuple[str, str]]:
    if table == "gb_entity_sessions":
        query = (
            "SELECT e.name, s.session_id FROM gb_entity_sessions s JOIN gb_entities e ON e.id = s.entity_id"
        )
    else:
        query = "SELECT g.relation, s.session_id FROM gb_edge_sessions s JOIN gb_edges g ON g.id = s.edge_id"
    return sorted(db.execute(query).fetchall())


def test_the_seeds_example_sessions_a_and_b_then_no_session(api, db, models):
    first = remember(api, "Alice works at Acme.", session_id="a")
    remember(api, "Alice works at Acme.", session_id="b")
    remember(api, "Alice works at Acme.")

    assert db.execute("SELECT id, session_id FROM gb_artifacts ORDER BY id").fetchall() == [
        (1, "a"),
        (2, "b"),
        (3, None),
    ]
    # Alice and Acme, written once, by artifact 1
    assert db.execute("SELECT name FROM gb_entities ORDER BY name").fetchall() == [("Acme",), ("Alice",)]
    assert first["artifact_id"] == 1 and all(entity["created"] for entity in first["entities"])
    assert names_and_sessions(db, "gb_entity_sessions") == [
        ("Acme", "a"),
        ("Acme", "b"),
        ("Alice", "a"),
        ("Alice", "b"),
    ]
    assert db.execute("SELECT relation, artifact_id FROM gb_edges").fetchall() == [("works_at", 1)]
    assert names_and_sessions(db, "gb_edge_sessions") == [("works_at", "a"), ("works_at", "b")]


def test_the_repeat_reports_the_stored_entities_and_edge_as_not_created(api, db, models):
    first = remember(api, "Alice works at Acme.", session_id="a")
    second = remember(api, "Alice works at Acme.", session_id="b")

    assert [e["created"] for e in second["entities"]] == [False, False]
    assert [e["id"] for e in second["entities"]] == [e["id"] for e in first["entities"]]
    [edge] = second["edges"]
    assert edge["id"] == first["edges"][0]["id"] and edge["created"] is False
    assert edge["artifact_id"] == first["artifact_id"]


def test_session_links_are_idempotent_within_a_session(api, db, models):
    remember(api, "Alice works at Acme. Alice works at Acme.", session_id="a")
    remember(api, "Alice works at Acme.", session_id="a")

    assert count_rows(db, "gb_entity_sessions") == 2
    assert count_rows(db, "gb_edge_sessions") == 1


def test_a_call_without_session_adds_no_session_link(api, db, models):
    remember(api, "Alice works at Acme.")
    remember(api, "Alice works at Acme.", session_id="   ")

    assert count_rows(db, "gb_entity_sessions") == 0
    assert count_rows(db, "gb_edge_sessions") == 0
    assert db.execute("SELECT session_id FROM gb_artifacts").fetchall() == [(None,), (None,)]


def test_an_entity_named_only_by_an_edge_is_linked_even_when_already_stored(
    api, db, fake_anthropic, fake_openai
):
    fake_anthropic.queue({"entities": [{"name": "Acme", "type": "organization"}], "edges": []})
    remember(api, "Acme.", session_id="a")
    fake_anthropic.queue(
        {
            "entities": [{"name": "Alice", "type": "person"}],
            "edges": [{"source": "Alice", "target": "Acme", "relation": "works_at"}],
        }
    )

    body = remember(api, "Alice works at Acme.", session_id="b")

    acme = next(e for e in body["entities"] if e["name"] == "Acme")
    assert acme["created"] is False
    assert names_and_sessions(db, "gb_entity_sessions") == [("Acme", "a"), ("Acme", "b"), ("Alice", "b")]
    assert db.execute(
        "SELECT artifact_id FROM gb_entity_artifacts WHERE entity_id = %s ORDER BY artifact_id", [acme["id"]]
    ).fetchall() == [(1,), (2,)]


def test_provenance_links_every_entity_and_edge_to_each_artifact_stating_it(api, db, models):
    remember(api, "Alice works at Acme.", session_id="a")
    remember(api, "Alice works at Acme. Alice lives in Paris.", session_id="b")

    links = db.execute(
        "SELECT e.name, ea.artifact_id FROM gb_entity_artifacts ea "
        "JOIN gb_entities e ON e.id = ea.entity_id ORDER BY 1, 2"
    ).fetchall()
    assert links == [("Acme", 1), ("Acme", 2), ("Alice", 1), ("Alice", 2), ("Paris", 2)]
    edge_links = db.execute(
        "SELECT g.relation, ga.artifact_id FROM gb_edge_artifacts ga "
        "JOIN gb_edges g ON g.id = ga.edge_id ORDER BY 1, 2"
    ).fetchall()
    assert edge_links == [("lives_in", 2), ("works_at", 1), ("works_at", 2)]


def test_a_contradicted_edge_is_not_linked_to_the_contradicting_artifact_or_session(api, db, models):
    paris = remember(api, "Alice lives in Paris.", session_id="a")["edges"][0]["id"]

    body = remember(api, "Alice moved to Lyon in 2025.", session_id="b")

    assert [s["id"] for s in body["superseded"]] == [paris]
    assert db.execute("SELECT session_id FROM gb_edge_sessions WHERE edge_id = %s", [paris]).fetchall() == [
        ("a",)
    ]
    assert db.execute("SELECT artifact_id FROM gb_edge_artifacts WHERE edge_id = %s", [paris]).fetchall() == [
        (1,)
    ]
    lyon = body["edges"][0]["id"]
    assert db.execute("SELECT session_id FROM gb_edge_sessions WHERE edge_id = %s", [lyon]).fetchall() == [
        ("b",)
    ]


def test_a_duplicate_found_by_the_llm_is_linked_as_a_restatement(api, db, models):
    stored = remember(api, "Alice works at Acme.", session_id="a")["edges"][0]

    body = remember(api, "Alice is employed by Acme.", session_id="b")

    [edge] = body["edges"]
    assert edge["id"] == stored["id"] and edge["created"] is False and edge["relation"] == "works_at"
    assert count_rows(db, "gb_edges") == 1
    assert names_and_sessions(db, "gb_edge_sessions") == [("works_at", "a"), ("works_at", "b")]
    assert db.execute("SELECT artifact_id FROM gb_edge_artifacts ORDER BY 1").fetchall() == [(1,), (2,)]


def test_sessions_of_two_users_stay_in_their_own_datasets(api, db, models):
    remember(api, "Alice works at Acme.", session_id="s1")
    api.post("/v1/gb/remember", {"user_id": "u2", "text": "Alice works at Acme.", "session_id": "s1"})

    assert count_rows(db, "gb_entities") == 4
    assert (
        db.execute(
            "SELECT count(DISTINCT dataset_id) FROM gb_entities e "
            "JOIN gb_entity_sessions s ON s.entity_id = e.id"
        ).fetchone()[0]
        == 2
    )
