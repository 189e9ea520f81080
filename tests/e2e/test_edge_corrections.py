"""Correcting a fact by hand over HTTP: PATCH /v1/gb/edges/{id} against the local API, from a
remember (the rule-based model) to the rows it leaves: the old edge expired now and superseded by
the new one, stated by an artifact of kind correction that records who asked and the previous
values; only invalid_at ends the fact in place. No LLM call; one embeddings request at most."""

from __future__ import annotations

import json

import pytest
from graph_rows import graph_counts
from remember_helpers import remember

ALICE_AT_ACME = "Alice works at Acme."


def patch(api, edge_id, body: dict, **kwargs):
    return api.request("PATCH", f"/v1/gb/edges/{edge_id}", body, **kwargs)


def edge_row(db, edge_id: int) -> dict:
    cursor = db.execute(
        """SELECT e.id, e.description, t.name AS target, t.type AS target_type, e.valid_at, e.invalid_at,
                  e.expired_at, e.superseded_by, e.artifact_id, e.embedding IS NOT NULL AS embedded
           FROM gb_edges e JOIN gb_entities t ON t.id = e.target_id WHERE e.id = %s""",
        [edge_id],
    )
    names = [column.name for column in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def correction_artifact(db, artifact_id: int) -> dict:
    kind, text = db.execute("SELECT kind, text FROM gb_artifacts WHERE id = %s", [artifact_id]).fetchone()
    assert kind == "correction"
    return json.loads(text)


@pytest.fixture
def alice_at_acme(api, models) -> int:
    """Alice works at Acme, remembered for u1: the fact's edge id."""
    return remember(api, ALICE_AT_ACME)["edges"][0]["id"]


def test_a_new_description_supersedes_the_fact_with_a_correction_artifact(api, db, models, alice_at_acme):
    fake_anthropic, fake_openai = models
    llm_calls, embeddings = len(fake_anthropic.messages), len(fake_openai.embedding_requests)

    reply = patch(
        api, alice_at_acme, {"user_id": "u1", "description": "Alice leads Acme's lab.", "reason": "typo"}
    )

    assert reply.status == 200, reply.json
    body = reply.json
    new_id = body["edge"]["id"]
    assert new_id != alice_at_acme
    assert (body["edge"]["source"], body["edge"]["relation"], body["edge"]["target"]) == (
        "Alice",
        "works_at",
        "Acme",
    )
    assert body["edge"]["description"] == "Alice leads Acme's lab."
    assert [s["id"] for s in body["superseded"]] == [alice_at_acme]
    old, new = edge_row(db, alice_at_acme), edge_row(db, new_id)
    assert old["expired_at"] is not None and old["superseded_by"] == new_id
    assert old["invalid_at"] == new["valid_at"]  # the contradiction rule: it stopped when the new one began
    assert new["expired_at"] is None and new["embedded"] and new["artifact_id"] == body["artifact_id"]
    record = correction_artifact(db, body["artifact_id"])
    assert (
        record["requested_by"] == "u1" and record["reason"] == "typo" and record["edge_id"] == alice_at_acme
    )
    assert record["previous"]["description"] == "Alice works at Acme."
    assert record["changes"] == {"description": "Alice leads Acme's lab."}
    linked = db.execute("SELECT artifact_id FROM gb_edge_artifacts WHERE edge_id = %s", [new_id]).fetchall()
    assert linked == [(body["artifact_id"],)]
    read_back = api.get(f"/v1/gb/artifacts/{body['artifact_id']}?user_id=u1")
    assert read_back.status == 200 and read_back.json["kind"] == "correction"
    assert [e["id"] for e in read_back.json["edges"]] == [new_id]
    # No LLM call; one embeddings request, for the new fact's text, recorded as an inference.
    assert len(fake_anthropic.messages) == llm_calls
    requests = fake_openai.embedding_requests[embeddings:]
    assert [r["input"] for r in requests] == [["Alice works_at Acme: Alice leads Acme's lab."]]
    assert db.execute("SELECT count(*) FROM gb_inferences WHERE stage = 'embed'").fetchone()[0] == 2


def test_a_target_named_for_the_first_time_is_created_and_an_existing_one_found_by_id(
    api, db, models, alice_at_acme
):
    _, fake_openai = models
    paris = next(e["id"] for e in remember(api, "Bob lives in Paris.")["entities"] if e["name"] == "Paris")

    by_name = patch(api, alice_at_acme, {"user_id": "u1", "target": "  Globex   Corp "})

    assert by_name.status == 200, by_name.json
    globex = edge_row(db, by_name.json["edge"]["id"])
    assert (globex["target"], globex["target_type"]) == ("Globex Corp", "unknown")
    # A new target without a new description: a sentence naming the new ends, made without a model.
    assert by_name.json["edge"]["description"] == "Alice works at Globex Corp."
    assert fake_openai.embedding_requests[-1]["input"] == [
        "Alice works_at Globex Corp: Alice works at Globex Corp.",
        "Globex Corp (unknown): ",
    ]

    by_id = patch(api, by_name.json["edge"]["id"], {"user_id": "u1", "target": paris})

    assert by_id.status == 200, by_id.json
    assert (by_id.json["edge"]["target_id"], by_id.json["edge"]["target"]) == (paris, "Paris")
    assert fake_openai.embedding_requests[-1]["input"] == ["Alice works_at Paris: Alice works at Paris."]


def test_a_target_name_loses_its_control_characters_as_the_facts_names_do(api, db, models, alice_at_acme):
    facts = {"entities": [{"name": "Ini\u001btech\u0007", "type": "organization"}]}
    remembered = api.post("/v1/gb/remember", {"user_id": "u1", "facts": facts})
    assert remembered.status == 200, remembered.json
    [initech] = [e for e in remembered.json["entities"] if e["name"] == "Initech"]

    found = patch(api, alice_at_acme, {"user_id": "u1", "target": "\u009bIni\u0001tech"})

    assert found.status == 200, found.json
    assert (found.json["edge"]["target_id"], found.json["edge"]["target"]) == (initech["id"], "Initech")
    created = patch(
        api, found.json["edge"]["id"], {"user_id": "u1", "target": "Glo\u001bbex\u000b\u0085Corp\u0080"}
    )
    assert created.status == 200, created.json
    assert edge_row(db, created.json["edge"]["id"])["target"] == "Globex Corp"
    assert created.json["edge"]["description"] == "Alice works at Globex Corp."
    names = [name for (name,) in db.execute("SELECT name FROM gb_entities ORDER BY id").fetchall()]
    assert all(name.isprintable() for name in names), names


def test_only_invalid_at_ends_the_fact_in_place_without_a_model_call(api, db, models, alice_at_acme):
    fake_anthropic, fake_openai = models
    sent = len(fake_anthropic.messages) + len(fake_openai.requests)

    reply = patch(api, alice_at_acme, {"user_id": "u1", "invalid_at": "2030-06-01T00:00:00Z"})

    assert reply.status == 200, reply.json
    assert reply.json["edge"]["id"] == alice_at_acme and reply.json["superseded"] == []
    assert reply.json["edge"]["invalid_at"] == "2030-06-01T00:00:00Z"
    row = edge_row(db, alice_at_acme)
    assert row["expired_at"] is None and row["invalid_at"].year == 2030
    record = correction_artifact(db, reply.json["artifact_id"])
    assert record["previous"]["invalid_at"] is None and record["changes"] == {
        "invalid_at": "2030-06-01T00:00:00Z"
    }
    assert len(fake_anthropic.messages) + len(fake_openai.requests) == sent


def test_a_valid_at_alone_keeps_the_stored_vector(api, db, models, alice_at_acme):
    _, fake_openai = models
    sent = len(fake_openai.requests)

    reply = patch(api, alice_at_acme, {"user_id": "u1", "valid_at": "2020-01-01T00:00:00Z"})

    assert reply.status == 200, reply.json
    assert reply.json["edge"]["valid_at"] == "2020-01-01T00:00:00Z"
    assert edge_row(db, reply.json["edge"]["id"])["embedded"]
    assert len(fake_openai.requests) == sent


def test_an_edge_already_superseded_is_a_409_that_changes_nothing(api, db, models, alice_at_acme):
    assert patch(api, alice_at_acme, {"user_id": "u1", "description": "Alice runs Acme."}).status == 200
    counts = graph_counts(db)

    reply = patch(api, alice_at_acme, {"user_id": "u1", "description": "Alice owns Acme."})

    assert reply.status == 409
    assert "superseded" in reply.json["error"]
    assert graph_counts(db) == counts


def test_another_user_s_edge_is_a_404_that_changes_nothing(api, db, models, alice_at_acme):
    counts = graph_counts(db)

    for body in (
        {"user_id": "u2", "description": "Alice left."},
        {"user_id": "u2", "invalid_at": "2030-01-01T00:00:00Z"},
    ):
        reply = patch(api, alice_at_acme, body)
        assert reply.status == 404, reply.json
        assert reply.json == {"error": "edge not found"}
    assert patch(api, 999999, {"user_id": "u1", "description": "x"}).status == 404
    assert graph_counts(db) == counts
    assert edge_row(db, alice_at_acme)["expired_at"] is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"user_id": "u1"}, "at least one of description, target, relation, valid_at, invalid_at"),
        ({"user_id": "u1", "description": None}, "at least one of"),
        ({"description": "x"}, "user_id: required, in the query string or the body"),
        ({"user_id": "u1", "description": "x", "source": "Bob"}, "source: unknown field"),
        ({"user_id": "u1", "relation": "!!"}, "relation: must name the relation"),
        ({"user_id": "u1", "description": "   "}, "description: must not be blank"),
        ({"user_id": "u1", "description": 7}, "description"),
        ({"user_id": "u1", "target": True}, "target"),
        ({"user_id": "u1", "target": 0}, "target"),
        ({"user_id": "u1", "target": []}, "target"),
        ({"user_id": "u1", "target": 987654}, "target: entity 987654 is not in the fact's dataset"),
        ({"user_id": "u1", "target": "\u0001\u001b"}, "target: must not be only control characters"),
        ({"user_id": "u1", "target": " \u009b \u0007 "}, "target: must not be only control characters"),
        ({"user_id": "u1", "valid_at": "yesterday"}, "valid_at"),
        (
            {"user_id": "u1", "invalid_at": "1999-01-01T00:00:00Z", "valid_at": "2020-01-01T00:00:00Z"},
            "before",
        ),
        ({"user_id": "u1", "description": "Alice works at Acme."}, "changes nothing"),
        ({"user_id": "u1", "reason": "x" * 1001, "description": "y"}, "reason"),
        ([1, 2], "body must be a JSON object"),
    ],
)
def test_a_hostile_body_is_a_400_that_changes_nothing(api, db, models, alice_at_acme, body, message):
    counts, sent = graph_counts(db), len(models[1].requests)

    reply = patch(api, alice_at_acme, body)

    assert reply.status == 400, reply.json
    assert message in reply.json["error"]
    assert graph_counts(db) == counts and len(models[1].requests) == sent


def test_a_body_that_is_not_json_and_a_bad_id_are_400s(api, db, models, alice_at_acme):
    assert api.request("PATCH", f"/v1/gb/edges/{alice_at_acme}", raw=b"{not json").status == 400
    assert patch(api, "abc", {"user_id": "u1", "description": "x"}).status == 400
    assert patch(api, 0, {"user_id": "u1", "description": "x"}).status == 400
    assert patch(api, 2**63, {"user_id": "u1", "description": "x"}).status == 400


def test_an_idempotency_key_replays_the_first_correction(api, db, models, alice_at_acme):
    _, fake_openai = models
    key = {"Idempotency-Key": "fix-1"}
    body = {"user_id": "u1", "description": "Alice leads Acme."}

    first = patch(api, alice_at_acme, body, headers=key)
    sent = len(fake_openai.requests)
    counts = graph_counts(db)
    again = patch(api, alice_at_acme, body, headers=key)
    other = patch(api, alice_at_acme, {**body, "description": "Alice owns Acme."}, headers=key)

    assert first.status == again.status == 200
    assert again.json == first.json and again.headers.get("idempotent-replayed") == "true"
    assert graph_counts(db) == counts and len(fake_openai.requests) == sent
    assert other.status == 409 and "another request body" in other.json["error"]
    # Without the key the same body is a new request: the fact is already superseded.
    assert patch(api, alice_at_acme, body).status == 409


def test_the_delete_of_an_edge_is_still_forget_s(api, db, models, alice_at_acme):
    reply = api.delete(f"/v1/gb/edges/{alice_at_acme}?user_id=u1")

    assert reply.status == 200, reply.json
    assert reply.json["deleted"]["edges"] == 1
    put = api.request("PUT", f"/v1/gb/edges/{alice_at_acme}", {"user_id": "u1"})
    assert put.status == 405 and put.headers["allow"] == "DELETE, GET, PATCH"
