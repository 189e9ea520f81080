"""Forget on precise graphs (rows arranged directly, linked as remember links them): what goes,
what stays and with which provenance. The orphan checker runs after every forget."""

from __future__ import annotations

import pytest
from conftest import count_rows
from forget_helpers import LinkedGraph, orphans, vectors_of
from graph_rows import graph_counts

from gligabao import bootstrap
from gligabao.errors import Conflict, NotFound
from gligabao.memory.forget import Forgotten, forget_artifact, forget_edge, forget_entity


def forgotten_artifact(artifact_id: int, user_id: str = "u1") -> Forgotten:
    return forget_artifact(bootstrap.bundle(), user_id, artifact_id)


def ids(db, table: str) -> list[int]:
    return [row[0] for row in db.execute(f"SELECT id FROM {table} ORDER BY id")]


def links(db, table: str) -> list[tuple]:
    return db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()


@pytest.fixture
def graph(db) -> LinkedGraph:
    return LinkedGraph(db)


# --- artifacts ----------------------------------------------------------------------------------


def test_forgetting_the_only_artifact_of_a_fact_deletes_the_fact_its_entities_links_and_vectors(db, graph):
    text = graph.text("Alice works at Acme.", session_id="a")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    graph.fact(text, alice, acme, "works_at", description="Alice works at Acme.", session_id="a")

    assert forgotten_artifact(text) == Forgotten(artifacts=1, chunks=0, entities=2, edges=1)

    counts = graph_counts(db)
    assert counts.pop("gb_datasets") == 1  # the dataset stays, empty
    assert set(counts.values()) == {0}, counts
    assert vectors_of(db) == {"entities": 0, "edges": 0, "chunks": 0, "summaries": 0}
    assert orphans(db) == []


def test_forgetting_one_of_two_artifacts_stating_a_fact_keeps_it_with_its_provenance_moved(db, graph):
    first = graph.text("Alice works at Acme.", session_id="a")
    second = graph.text("Alice works at Acme, again.", session_id="b")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    works = graph.fact(first, alice, acme, "works_at", session_id="a")
    graph.states(second, works, session_id="b")

    assert forgotten_artifact(first) == Forgotten(artifacts=1, chunks=0, entities=0, edges=0)

    assert ids(db, "gb_edges") == [works]
    assert db.execute("SELECT artifact_id FROM gb_edges").fetchone()[0] == second
    assert links(db, "gb_edge_artifacts") == [(works, second)]
    assert links(db, "gb_entity_artifacts") == [(alice, second), (acme, second)]
    # The seed: a session link is independent of the artifact link, and survives it.
    assert links(db, "gb_edge_sessions") == [(works, "a"), (works, "b")]
    assert ids(db, "gb_artifacts") == [second]
    assert orphans(db) == []


def test_a_fact_that_stays_names_the_first_stored_of_its_remaining_artifacts(db, graph):
    first, second, third = (graph.text(f"Alice works at Acme ({n}).") for n in (1, 2, 3))
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    works = graph.fact(first, alice, acme, "works_at")
    graph.states(third, works)
    graph.states(second, works)

    forgotten_artifact(first)

    assert db.execute("SELECT artifact_id FROM gb_edges WHERE id = %s", [works]).fetchone()[0] == second
    forgotten_artifact(second)
    assert db.execute("SELECT artifact_id FROM gb_edges WHERE id = %s", [works]).fetchone()[0] == third
    assert orphans(db) == []


def test_a_fact_first_stated_by_another_artifact_keeps_its_artifact_id(db, graph):
    first, second = graph.text("Alice works at Acme."), graph.text("Alice works at Acme, again.")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    works = graph.fact(first, alice, acme, "works_at")
    graph.states(second, works)

    forgotten_artifact(second)

    assert db.execute("SELECT artifact_id FROM gb_edges").fetchone()[0] == first
    assert links(db, "gb_edge_artifacts") == [(works, first)]
    assert orphans(db) == []


def test_an_entity_another_artifact_mentions_stays_when_its_only_fact_goes(db, graph):
    about_alice = graph.text("Alice is an engineer.")
    text = graph.text("Alice works at Acme.")
    alice, acme = graph.entity("Alice", description="engineer"), graph.entity("Acme", "organization")
    graph.mentions(about_alice, alice)
    graph.fact(text, alice, acme, "works_at")

    assert forgotten_artifact(text) == Forgotten(artifacts=1, chunks=0, entities=1, edges=1)

    assert db.execute("SELECT name FROM gb_entities").fetchall() == [("Alice",)]
    assert links(db, "gb_entity_artifacts") == [(alice, about_alice)]
    assert orphans(db) == []


def test_an_entity_a_remaining_fact_touches_stays(db, graph):
    one, other = graph.text("Alice works at Acme."), graph.text("Alice knows Bob.")
    alice, acme, bob = graph.entity("Alice"), graph.entity("Acme", "organization"), graph.entity("Bob")
    graph.fact(one, alice, acme, "works_at")
    # Only the edge holds Alice once `one` is gone: `other` is linked to the edge, not to her.
    knows = graph.edge(alice, bob, "knows", artifact_id=other)
    db.execute("INSERT INTO gb_edge_artifacts VALUES (%s, %s)", [knows, other])
    graph.mentions(other, bob)

    assert forgotten_artifact(one) == Forgotten(artifacts=1, chunks=0, entities=1, edges=1)

    assert ids(db, "gb_entities") == [alice, bob]
    assert ids(db, "gb_edges") == [knows]
    assert orphans(db) == []


def test_forgetting_a_chunked_text_deletes_its_chunks_and_what_only_they_state(db, graph):
    text = graph.text("Alice works at Acme. ... Bob lives in Paris.")
    chunks = [graph.chunk(text, i, f"part {i}", f"summary {i}") for i in range(3)]
    elsewhere = graph.text("Bob lives in Paris.")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    bob, paris = graph.entity("Bob"), graph.entity("Paris", "place")
    graph.fact(chunks[0], alice, acme, "works_at")
    lives = graph.fact(chunks[2], bob, paris, "lives_in")
    graph.states(chunks[1], lives)
    graph.states(elsewhere, lives)

    assert forgotten_artifact(text) == Forgotten(artifacts=1, chunks=3, entities=2, edges=1)

    assert ids(db, "gb_artifacts") == [elsewhere]
    assert ids(db, "gb_edges") == [lives]
    assert db.execute("SELECT artifact_id FROM gb_edges").fetchone()[0] == elsewhere
    assert ids(db, "gb_entities") == [bob, paris]
    assert vectors_of(db)["chunks"] == 0 and vectors_of(db)["summaries"] == 0
    assert orphans(db) == []


def test_a_superseded_fact_only_the_text_stated_goes_and_one_it_superseded_stays_superseded(db, graph):
    from query_helpers import T0

    paris_text, lyon_text = graph.text("Alice lives in Paris."), graph.text("Alice moved to Lyon.")
    alice, paris, lyon = graph.entity("Alice"), graph.entity("Paris", "place"), graph.entity("Lyon", "place")
    in_paris = graph.fact(paris_text, alice, paris, "lives_in", invalid_at=T0, expired_at=T0)
    in_lyon = graph.fact(lyon_text, alice, lyon, "lives_in", valid_at=T0)
    db.execute("UPDATE gb_edges SET superseded_by = %s WHERE id = %s", [in_lyon, in_paris])

    # Forgetting the text that superseded Paris does not revive Paris: its end is what was known.
    assert forgotten_artifact(lyon_text) == Forgotten(artifacts=1, chunks=0, entities=1, edges=1)
    assert db.execute("SELECT id, expired_at IS NOT NULL, superseded_by FROM gb_edges").fetchall() == [
        (in_paris, True, None)
    ]
    assert orphans(db) == []

    # The superseded fact is a fact the text stated: forgetting the text forgets it too.
    assert forgotten_artifact(paris_text) == Forgotten(artifacts=1, chunks=0, entities=2, edges=1)
    assert count_rows(db, "gb_edges") == 0
    assert orphans(db) == []


def test_a_chunk_is_forgotten_with_its_text_never_alone(db, graph):
    text = graph.text("a long text")
    chunk = graph.chunk(text, 0, "part 0")
    before = graph_counts(db)

    with pytest.raises(Conflict) as refused:
        forgotten_artifact(chunk)

    assert refused.value.message == f"artifact {chunk} is chunk 0 of artifact {text}: forget artifact {text}"
    assert graph_counts(db) == before


def test_entities_the_forget_did_not_touch_are_never_swept(db, graph):
    """An entity that nothing held already before (no artifact, no edge) is not this forget's to delete."""
    text = graph.text("Alice works at Acme.")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    graph.fact(text, alice, acme, "works_at")
    loner = graph.entity("Loner")

    forgotten_artifact(text)

    assert ids(db, "gb_entities") == [loner]


def test_another_dataset_of_the_user_is_untouched(db, graph):
    other = LinkedGraph(db, name="other")
    for g in (graph, other):
        text = g.text("Alice works at Acme.")
        g.fact(text, g.entity("Alice"), g.entity("Acme", "organization"), "works_at")
    before = {
        table: db.execute(
            f"SELECT count(*) FROM {table} WHERE dataset_id = %s", [other.dataset_id]
        ).fetchone()
        for table in ("gb_artifacts", "gb_entities", "gb_edges")
    }

    forgotten_artifact(ids(db, "gb_artifacts")[0])

    after = {
        table: db.execute(
            f"SELECT count(*) FROM {table} WHERE dataset_id = %s", [other.dataset_id]
        ).fetchone()
        for table in ("gb_artifacts", "gb_entities", "gb_edges")
    }
    assert after == before
    assert count_rows(db, "gb_entities") == 2
    assert orphans(db) == []


# --- entities -----------------------------------------------------------------------------------


def test_forgetting_an_entity_deletes_every_fact_about_it_live_and_superseded_with_their_links(db, graph):
    from query_helpers import T0

    text = graph.text("Alice works at Acme. Alice worked at Initech.", session_id="a")
    alice, acme, initech = graph.entity("Alice"), graph.entity("Acme"), graph.entity("Initech")
    graph.fact(text, alice, acme, "works_at", session_id="a")
    graph.fact(text, alice, initech, "works_at", expired_at=T0, session_id="a")
    bob = graph.entity("Bob")
    knows = graph.fact(text, acme, bob, "knows")

    assert forget_entity(bootstrap.bundle(), "u1", alice) == Forgotten(
        artifacts=0, chunks=0, entities=1, edges=2
    )

    assert ids(db, "gb_entities") == [acme, initech, bob]  # the text still mentions them
    assert ids(db, "gb_edges") == [knows]
    assert [row[0] for row in links(db, "gb_entity_sessions")] == [acme, initech]
    assert [row[0] for row in links(db, "gb_edge_sessions")] == []
    assert [row[0] for row in links(db, "gb_edge_artifacts")] == [knows]
    assert ids(db, "gb_artifacts") == [text]  # forgetting an entity is not forgetting the text
    assert orphans(db) == []


def test_forgetting_an_entity_deletes_a_neighbour_its_facts_alone_held(db, graph):
    """Rows remember would never leave (an entity no artifact mentions): the rule still holds."""
    text = graph.text("Alice works at Acme.")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    works = graph.edge(alice, acme, "works_at", artifact_id=text)
    db.execute("INSERT INTO gb_edge_artifacts VALUES (%s, %s)", [works, text])
    graph.mentions(text, alice)  # Acme is mentioned by no artifact

    assert forget_entity(bootstrap.bundle(), "u1", alice) == Forgotten(
        artifacts=0, chunks=0, entities=2, edges=1
    )

    assert count_rows(db, "gb_entities") == 0
    assert orphans(db) == []


# --- edges --------------------------------------------------------------------------------------


def test_forgetting_an_edge_deletes_it_and_its_links_and_keeps_its_entities(db, graph):
    text = graph.text("Alice works at Acme.", session_id="a")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    works = graph.fact(text, alice, acme, "works_at", session_id="a")

    assert forget_edge(bootstrap.bundle(), "u1", works) == Forgotten(
        artifacts=0, chunks=0, entities=0, edges=1
    )

    assert count_rows(db, "gb_edges") == 0
    assert count_rows(db, "gb_edge_artifacts") == 0 and count_rows(db, "gb_edge_sessions") == 0
    assert ids(db, "gb_entities") == [alice, acme]
    assert count_rows(db, "gb_entity_sessions") == 2
    assert orphans(db) == []


# --- whose rows ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("forget", "kind"),
    [(forget_artifact, "artifact"), (forget_entity, "entity"), (forget_edge, "edge")],
)
def test_another_users_row_is_not_found_and_nothing_is_deleted(db, graph, forget, kind):
    text = graph.text("Alice works at Acme.")
    alice, acme = graph.entity("Alice"), graph.entity("Acme", "organization")
    works = graph.fact(text, alice, acme, "works_at")
    row_id = {"artifact": text, "entity": alice, "edge": works}[kind]
    before = graph_counts(db)

    with pytest.raises(NotFound) as refused:
        forget(bootstrap.bundle(), "u2", row_id)

    assert refused.value.message == f"{kind} {row_id} not found"
    assert graph_counts(db) == before
