"""Forget over HTTP: DELETE /v1/gb/artifacts/{id}, /v1/gb/entities/{id} and /v1/gb/edges/{id},
from a remember (the rule-based model) to a query (the real route, the fake providers) that can
no longer retrieve what was forgotten, by keyword or by vector. The orphan checker runs after
every forget."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from forget_helpers import orphans, vectors_of
from graph_rows import graph_counts
from remember_helpers import paragraphs, prompt_of, remember, rule_based_model

ALICE_AT_ACME_FACT = "Alice works_at Acme: Alice works at Acme."  # what remember embeds for the fact
NO_KEYWORD_QUESTION = "Which employer?"  # no term of it is in any name or description
SINGULAR = {"artifacts": "artifact", "entities": "entity", "edges": "edge"}


def answering(body: dict) -> dict:
    """The rule-based model, which also answers queries (without citing anything)."""
    if "<graph>" in prompt_of(body):
        return {"answer": "I don't know.", "entities": [], "edges": [], "passages": []}
    return rule_based_model(body)


@pytest.fixture
def models(fake_anthropic, fake_openai):
    fake_anthropic.responder = answering
    return fake_anthropic, fake_openai


def forget(api, kind: str, row_id, user_id: str = "u1"):
    return api.delete(f"/v1/gb/{kind}/{row_id}?user_id={quote(user_id)}")


def context_retrieved(api, fake_anthropic, question: str) -> str:
    """The graph and passages a query put in its prompt ('' when nothing was retrieved at all)."""
    sent = len(fake_anthropic.messages)
    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": question})
    assert reply.status == 200, reply.json
    if len(fake_anthropic.messages) == sent:
        return ""
    prompt = prompt_of(fake_anthropic.messages[-1])
    return prompt[: prompt.index("<current_time>")]


def edge_ids(context: str) -> set[int]:
    return {int(m) for m in re.findall(r"^\[edge (\d+)\]", context, re.MULTILINE)}


def entity_ids(context: str) -> set[int]:
    return {int(m) for m in re.findall(r"^\[entity (\d+)\]", context, re.MULTILINE)}


def test_a_forgotten_text_s_fact_is_retrieved_by_no_keyword_and_no_vector_search(api, db, models):
    fake_anthropic, fake_openai = models
    fake_openai.override(NO_KEYWORD_QUESTION, fake_openai.vector(ALICE_AT_ACME_FACT))
    alice_text = remember(api, "Alice works at Acme.")
    remember(api, "Bob lives in Paris.")
    works = alice_text["edges"][0]["id"]
    alice, acme = (e["id"] for e in alice_text["entities"])
    # Both searches find the fact before: the test can see a retrieval when there is one.
    assert works in edge_ids(context_retrieved(api, fake_anthropic, "Acme"))
    assert works in edge_ids(context_retrieved(api, fake_anthropic, NO_KEYWORD_QUESTION))

    reply = forget(api, "artifacts", alice_text["artifact_id"])

    assert reply.status == 200, reply.json
    assert reply.json == {"deleted": {"artifacts": 1, "chunks": 0, "entities": 2, "edges": 1}}
    assert orphans(db) == []
    assert vectors_of(db) == {"entities": 2, "edges": 1, "chunks": 0, "summaries": 0}  # Bob's text's
    for question in ("Acme", "Where does Alice work?", NO_KEYWORD_QUESTION):
        context = context_retrieved(api, fake_anthropic, question)
        assert works not in edge_ids(context), question
        assert not {alice, acme} & entity_ids(context), question
        assert "Acme" not in context and "works_at" not in context, question


def test_forgetting_one_of_two_texts_stating_a_fact_keeps_it_retrievable_from_the_other(api, db, models):
    fake_anthropic, _ = models
    first = remember(api, "Alice works at Acme.", session_id="a")
    second = remember(api, "Alice works at Acme.", session_id="b")
    works = first["edges"][0]["id"]
    assert second["edges"][0]["id"] == works  # one fact, stated twice

    reply = forget(api, "artifacts", first["artifact_id"])

    assert reply.json == {"deleted": {"artifacts": 1, "chunks": 0, "entities": 0, "edges": 0}}
    assert db.execute("SELECT artifact_id FROM gb_edges").fetchall() == [(second["artifact_id"],)]
    assert db.execute("SELECT DISTINCT artifact_id FROM gb_entity_artifacts").fetchall() == [
        (second["artifact_id"],)
    ]
    assert works in edge_ids(context_retrieved(api, fake_anthropic, "Acme"))
    assert orphans(db) == []

    assert forget(api, "artifacts", second["artifact_id"]).json == {
        "deleted": {"artifacts": 1, "chunks": 0, "entities": 2, "edges": 1}
    }
    assert orphans(db) == [] and vectors_of(db)["edges"] == 0


def test_a_forgotten_long_text_takes_its_chunks_and_their_vectors_with_it(api, db, models):
    fake_anthropic, fake_openai = models
    long_text = paragraphs(8, 12)
    remembered = remember(api, long_text)
    assert remembered["chunk_count"] >= 2
    chunk_text = db.execute(
        "SELECT text FROM gb_artifacts WHERE kind = 'chunk' ORDER BY id LIMIT 1"
    ).fetchone()[0]
    fake_openai.override("What did the committee do?", fake_openai.vector(chunk_text))
    assert "[passage " in context_retrieved(api, fake_anthropic, "What did the committee do?")

    reply = forget(api, "artifacts", remembered["artifact_id"])

    assert reply.status == 200
    assert reply.json["deleted"]["artifacts"] == 1
    assert reply.json["deleted"]["chunks"] == remembered["chunk_count"]
    assert reply.json["deleted"]["edges"] == len(remembered["edges"])
    assert graph_counts(db) == {"gb_datasets": 1} | dict.fromkeys(
        [
            "gb_artifacts",
            "gb_entities",
            "gb_edges",
            "gb_entity_artifacts",
            "gb_edge_artifacts",
            "gb_entity_sessions",
            "gb_edge_sessions",
        ],
        0,
    )
    assert vectors_of(db) == {"entities": 0, "edges": 0, "chunks": 0, "summaries": 0}
    assert context_retrieved(api, fake_anthropic, "What did the committee do?") == ""
    assert orphans(db) == []


def test_a_forgotten_entity_and_its_facts_are_retrieved_no_more(api, db, models):
    fake_anthropic, fake_openai = models
    fake_openai.override(NO_KEYWORD_QUESTION, fake_openai.vector(ALICE_AT_ACME_FACT))
    remembered = remember(
        api, "Alice is an engineer. Alice works at Acme. Alice lives in Paris.", session_id="a"
    )
    alice = next(e["id"] for e in remembered["entities"] if e["name"] == "Alice")

    reply = forget(api, "entities", alice)

    assert reply.json == {"deleted": {"artifacts": 0, "chunks": 0, "entities": 1, "edges": 2}}
    assert db.execute("SELECT name FROM gb_entities ORDER BY name").fetchall() == [("Acme",), ("Paris",)]
    assert db.execute("SELECT count(*) FROM gb_entity_sessions WHERE entity_id = %s", [alice]).fetchone() == (
        0,
    )
    for question in ("Where does Alice work?", NO_KEYWORD_QUESTION):
        context = context_retrieved(api, fake_anthropic, question)
        assert alice not in entity_ids(context) and edge_ids(context) == set(), question
        assert "engineer" not in context
    assert orphans(db) == []


def test_a_forgotten_fact_is_retrieved_no_more_and_its_entities_stay(api, db, models):
    fake_anthropic, fake_openai = models
    fake_openai.override(NO_KEYWORD_QUESTION, fake_openai.vector(ALICE_AT_ACME_FACT))
    remembered = remember(api, "Alice works at Acme. Alice lives in Paris.")
    works = next(e["id"] for e in remembered["edges"] if e["relation"] == "works_at")

    reply = forget(api, "edges", works)

    assert reply.json == {"deleted": {"artifacts": 0, "chunks": 0, "entities": 0, "edges": 1}}
    assert db.execute("SELECT count(*) FROM gb_entities").fetchone() == (3,)
    for question in ("Acme", NO_KEYWORD_QUESTION):
        context = context_retrieved(api, fake_anthropic, question)
        assert works not in edge_ids(context) and "works_at" not in context, question
    assert orphans(db) == []


@pytest.mark.parametrize("kind", ["artifacts", "entities", "edges"])
def test_forgetting_twice_is_404_the_second_time(api, db, models, kind):
    remembered = remember(api, "Alice works at Acme.")
    row_id = {
        "artifacts": remembered["artifact_id"],
        "entities": remembered["entities"][0]["id"],
        "edges": remembered["edges"][0]["id"],
    }[kind]
    assert forget(api, kind, row_id).status == 200
    before = graph_counts(db)

    again = forget(api, kind, row_id)

    assert again.status == 404
    assert again.json == {
        "error": f"{kind.removesuffix('s').replace('entitie', 'entity')} {row_id} not found"
    }
    assert graph_counts(db) == before


# --- two users ------------------------------------------------------------------------------------


def test_no_user_can_forget_another_users_rows_by_guessing_ids(api, db, models):
    theirs = remember(api, "Alice works at Acme. Alice lives in Paris.", user_id="u2")
    before = graph_counts(db)
    every_id = range(1, 12)  # every id the other user's rows have, and more

    for kind in ("edges", "entities", "artifacts"):
        for row_id in every_id:
            reply = forget(api, kind, row_id, user_id="u1")
            assert reply.status == 404, (kind, row_id, reply.json)
            # The same answer as an id nobody has: the reply never tells whether it exists.
            absent = forget(api, kind, 10**9, user_id="u1")
            assert reply.json == {"error": absent.json["error"].replace(str(10**9), str(row_id))}

    assert graph_counts(db) == before
    assert forget(api, "edges", theirs["edges"][0]["id"], user_id="u2").status == 200
    assert orphans(db) == []


def test_a_user_with_data_of_their_own_still_cannot_forget_anothers(api, db, models):
    mine = remember(api, "Bob knows Carol.")
    theirs = remember(api, "Alice works at Acme.", user_id="u2")
    before = graph_counts(db)

    for kind, row_id in (
        ("artifacts", theirs["artifact_id"]),
        ("entities", theirs["entities"][0]["id"]),
        ("edges", theirs["edges"][0]["id"]),
    ):
        assert forget(api, kind, row_id).status == 404, kind

    assert graph_counts(db) == before
    assert forget(api, "artifacts", mine["artifact_id"]).status == 200
    assert db.execute("SELECT name FROM gb_entities ORDER BY name").fetchall() == [("Acme",), ("Alice",)]


@pytest.mark.parametrize("user_id", ["u1\u00a0", " u1", "u1\u200b", ""], ids=repr)
def test_a_lookalike_or_empty_user_id_is_400_and_forgets_nothing(api, db, models, user_id):
    remembered = remember(api, "Alice works at Acme.")
    before = graph_counts(db)

    for kind, row_id in (
        ("artifacts", remembered["artifact_id"]),
        ("entities", remembered["entities"][0]["id"]),
        ("edges", remembered["edges"][0]["id"]),
    ):
        reply = forget(api, kind, row_id, user_id=user_id)
        assert reply.status == 400, (kind, reply.json)
        assert "user_id" in reply.json["error"]

    assert graph_counts(db) == before


# --- the contract ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["artifacts", "entities", "edges"])
@pytest.mark.parametrize("bad", ["abc", "0", "-1", "1.5", "99999999999999999999", "9223372036854775808"])
def test_an_id_that_is_not_a_positive_bigint_is_400_naming_it(api, db, kind, bad):
    reply = forget(api, kind, bad)

    assert reply.status == 400, reply.json
    assert reply.json["error"].startswith(f"{SINGULAR[kind]}_id: ")


@pytest.mark.parametrize("kind", ["artifacts", "entities", "edges"])
def test_forget_without_user_id_is_400(api, db, kind):
    reply = api.delete(f"/v1/gb/{kind}/1")

    assert reply.status == 400
    assert reply.json == {"error": "user_id is required"}


def test_the_largest_bigint_is_a_valid_id_of_nothing(api, db):
    assert forget(api, "edges", 2**63 - 1).status == 404


def test_a_chunk_is_forgotten_with_its_text_409_otherwise(api, db, models):
    remembered = remember(api, paragraphs(8, 12))
    chunk = db.execute("SELECT id FROM gb_artifacts WHERE kind = 'chunk' ORDER BY id LIMIT 1").fetchone()[0]
    before = graph_counts(db)

    reply = forget(api, "artifacts", chunk)

    assert reply.status == 409
    parent = remembered["artifact_id"]
    assert reply.json == {
        "error": f"artifact {chunk} is chunk 0 of artifact {parent}: forget artifact {parent}"
    }
    assert graph_counts(db) == before


@pytest.mark.parametrize(
    ("method", "kind"),
    [("PUT", "entities"), ("POST", "entities"), ("PATCH", "entities"), ("PUT", "edges"), ("POST", "edges")],
)  # PATCH of an edge is its correction (test_edge_corrections.py)
def test_other_methods_on_entities_and_edges_are_405(api, db, method, kind):
    reply = api.request(method, f"/v1/gb/{kind}/1?user_id=u1")

    assert reply.status == 405
    assert "not allowed" in reply.json["error"]


def test_the_openapi_document_describes_the_three_forget_routes(api):
    paths = api.get("/v1/gb/openapi.json").json["paths"]

    for path, parameter in (
        ("/v1/gb/artifacts/{artifact_id}", "artifact_id"),
        ("/v1/gb/entities/{entity_id}", "entity_id"),
        ("/v1/gb/edges/{edge_id}", "edge_id"),
    ):
        operation = paths[path]["delete"]
        assert {p["name"] for p in operation["parameters"]} == {parameter, "user_id"}
        responses = operation["responses"]
        assert {"200", "400", "404", "503"} <= set(responses), path
        assert responses["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/ForgetResponse")
        assert responses["404"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    assert "409" in paths["/v1/gb/artifacts/{artifact_id}"]["delete"]["responses"]


# --- reading back -------------------------------------------------------------------------------


def test_what_was_forgotten_reads_back_as_404_and_its_session_lists_none_of_it(api, db, models):
    forgotten = remember(api, "Alice works at Acme.", session_id="a")
    kept = remember(api, "Bob knows Carol.", session_id="a")
    alice = forgotten["entities"][0]["id"]

    assert forget(api, "artifacts", forgotten["artifact_id"]).status == 200

    assert api.get(f"/v1/gb/artifacts/{forgotten['artifact_id']}?user_id=u1").status == 404
    assert api.get(f"/v1/gb/entities/{alice}?user_id=u1").status == 404
    session = api.get("/v1/gb/sessions/a?user_id=u1")
    assert session.status == 200, session.json
    assert [a["id"] for a in session.json["artifacts"]] == [kept["artifact_id"]]
    assert sorted(e["name"] for e in session.json["entities"]) == ["Bob", "Carol"]
    assert [e["relation"] for e in session.json["edges"]] == ["knows"]


def test_forgetting_the_text_that_superseded_a_fact_does_not_revive_it(api, db, models):
    fake_anthropic, _ = models
    remember(api, "Alice lives in Paris.", reference_time="2023-05-01T09:00:00Z")
    moved = remember(api, "Alice moved to Lyon in 2024.", reference_time="2025-01-31T09:00:00Z")
    paris = moved["superseded"][0]["id"]

    assert forget(api, "artifacts", moved["artifact_id"]).json["deleted"] == {
        "artifacts": 1,
        "chunks": 0,
        "entities": 1,
        "edges": 1,
    }

    assert db.execute("SELECT id, expired_at IS NOT NULL, superseded_by FROM gb_edges").fetchall() == [
        (paris, True, None)
    ]
    context = context_retrieved(api, fake_anthropic, "Where does Alice live?")
    assert "Lyon" not in context and paris not in edge_ids(context)
    assert orphans(db) == []
