"""Time you can trust, over HTTP (docs/concepts.md, "Time"): texts said out of order or about the past
keep one consistent history; a correction names its new ends; a supersession is undone in one call;
a forget never revives what it superseded. The rule-based model extracts and resolves (a new place,
or workplace, of a person contradicts the last)."""

from __future__ import annotations

import json

import pytest
from remember_helpers import FUNCTIONAL_RELATIONS, remember


@pytest.fixture(autouse=True)
def one_workplace_at_a_time(monkeypatch):
    monkeypatch.setattr("remember_helpers.FUNCTIONAL_RELATIONS", FUNCTIONAL_RELATIONS | {"works_at"})


def edge_row(db, edge_id: int) -> tuple:
    return db.execute(
        """SELECT t.name, to_char(e.valid_at, 'YYYY-MM-DD'), to_char(e.invalid_at, 'YYYY-MM-DD'),
                  e.expired_at IS NOT NULL, e.superseded_by
           FROM gb_edges e JOIN gb_entities t ON t.id = e.target_id WHERE e.id = %s""",
        [edge_id],
    ).fetchone()


def context_targets(api, **fields) -> list[str]:
    reply = api.post(
        "/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?", "answer": False, **fields}
    )
    assert reply.status == 200, reply.json
    return sorted(edge["target"] for edge in reply.json["edges"])


def no_period_is_inverted(db) -> bool:
    return db.execute("SELECT count(*) FROM gb_edges WHERE invalid_at < valid_at").fetchone()[0] == 0


def test_a_text_said_earlier_that_arrives_later_is_stored_already_superseded(api, db, models):
    globex = remember(api, "Alice works at Globex.", reference_time="2024-03-01T00:00:00Z")["edges"][0]

    body = remember(api, "Alice works at Acme.", reference_time="2023-01-01T00:00:00Z")

    [acme] = body["edges"]
    assert body["superseded"] == []  # it superseded nothing stored: it is the one superseded
    assert edge_row(db, globex["id"]) == ("Globex", "2024-03-01", None, False, None)
    assert edge_row(db, acme["id"]) == ("Acme", "2023-01-01", "2024-03-01", True, globex["id"])
    assert (acme["invalid_at"], "expired_at" in acme) == ("2024-03-01T00:00:00Z", True)
    assert no_period_is_inverted(db)
    # The user's employer now is the one said last; in 2023 it was Acme.
    assert context_targets(api) == ["Globex"]
    assert context_targets(api, as_of="2023-06-01T00:00:00Z") == ["Acme"]


def test_a_later_text_that_moves_a_start_back_ends_the_earlier_one_where_it_begins(api, db, models):
    paris = remember(api, "Hugo lives in Paris.", reference_time="2025-03-01T00:00:00Z")["edges"][0]

    body = remember(api, "Hugo moved to Rome in 2024.", reference_time="2025-06-01T00:00:00Z")

    [rome] = body["edges"]
    # Nothing of Paris remains where Rome, said later, holds: kept superseded, its period empty.
    assert edge_row(db, paris["id"]) == ("Paris", "2025-03-01", "2025-03-01", True, rome["id"])
    assert body["superseded"] == [
        {
            "id": paris["id"],
            "invalid_at": "2025-03-01T00:00:00Z",
            "expired_at": body["superseded"][0]["expired_at"],
        }
    ]
    assert edge_row(db, rome["id"]) == ("Rome", "2024-01-01", None, False, None)
    assert no_period_is_inverted(db)
    reply = api.post(
        "/v1/gb/query",
        {"user_id": "u1", "query": "Where does Hugo live?", "answer": False, "as_of": "2025-04-01T00:00:00Z"},
    )
    assert [edge["target"] for edge in reply.json["edges"]] == ["Rome"]


def test_the_history_of_a_fact_shows_what_each_text_said_and_how_far_it_holds(api, db, models):
    paris = remember(api, "Hugo lives in Paris.", reference_time="2025-03-01T00:00:00Z")
    rome = remember(api, "Hugo moved to Rome in 2024.", reference_time="2025-06-01T00:00:00Z")["edges"][0]
    edge_id = paris["edges"][0]["id"]

    [said] = api.get(f"/v1/gb/edges/{edge_id}?user_id=u1").json["history"]

    assert said == {
        "id": said["id"],
        "artifact_id": paris["artifact_id"],
        "kind": "said",
        "valid_at": "2025-03-01T00:00:00Z",
        "invalid_at": None,
        "said_at": "2025-03-01T00:00:00Z",
        "holds_until": "2025-03-01T00:00:00Z",
        "ended_by": rome["id"],
    }


@pytest.mark.parametrize(
    ("superseder", "rome_row"),
    [
        ("end", ("Rome", "2024-01-01", "2025-03-01", True)),  # Rome ends where Paris begins again
        ("keep", ("Rome", "2024-01-01", None, False)),  # wrongly judged: both hold
    ],
)
def test_a_restore_makes_a_superseded_fact_hold_again_in_one_call(api, db, models, superseder, rome_row):
    paris = remember(api, "Hugo lives in Paris.", reference_time="2025-03-01T00:00:00Z")["edges"][0]["id"]
    rome = remember(api, "Hugo moved to Rome in 2024.", reference_time="2025-06-01T00:00:00Z")["edges"][0][
        "id"
    ]

    reply = api.post(
        f"/v1/gb/edges/{paris}/restore?user_id=u1", {"superseder": superseder, "reason": "Hugo never moved"}
    )

    assert reply.status == 200, reply.json
    body = reply.json
    assert (body["edge"]["id"], body["edge"]["valid_at"], "invalid_at" in body["edge"]) == (
        paris,
        "2025-03-01T00:00:00Z",
        False,
    )
    assert body["superseder"]["id"] == rome
    assert edge_row(db, paris) == ("Paris", "2025-03-01", None, False, None)
    assert edge_row(db, rome)[:4] == rome_row
    kind, text = db.execute(
        "SELECT kind, text FROM gb_artifacts WHERE id = %s", [body["artifact_id"]]
    ).fetchone()
    record = json.loads(text)
    assert kind == "correction" and record["requested_by"] == "u1" and record["reason"] == "Hugo never moved"
    assert record["restore"] == {
        "superseder": superseder,
        "superseded_by": rome,
        "expired_at": record["restore"]["expired_at"],
    }
    # The trail: the restore is in the fact's provenance and history, and the timeline shows both.
    read = api.get(f"/v1/gb/edges/{paris}?user_id=u1").json
    assert body["artifact_id"] in [a["id"] for a in read["artifacts"]]
    assert [s["artifact_id"] for s in read["history"]][-1] == body["artifact_id"] and len(
        read["history"]
    ) == 2
    assert no_period_is_inverted(db)


def test_a_restore_of_a_live_fact_another_users_or_a_bad_body_changes_nothing(api, db, models):
    live = remember(api, "Hugo lives in Paris.")["edges"][0]["id"]
    artifacts = db.execute("SELECT count(*) FROM gb_artifacts").fetchone()[0]

    assert api.post(f"/v1/gb/edges/{live}/restore?user_id=u1", {"superseder": "end"}).status == 409
    assert api.post(f"/v1/gb/edges/{live}/restore?user_id=u2", {"superseder": "end"}).status == 404
    assert api.post(f"/v1/gb/edges/{live}/restore?user_id=u1", {"superseder": "maybe"}).status == 400
    assert api.post(f"/v1/gb/edges/{live}/restore?user_id=u1", {}).status == 400
    assert (
        api.post(f"/v1/gb/edges/{live}/restore", {"user_id": "u1", "superseder": "end", "x": 1}).status == 400
    )
    assert (
        api.post(f"/v1/gb/edges/{live}/restore?user_id=u1", {"user_id": "u2", "superseder": "end"}).status
        == 400
    )
    assert db.execute("SELECT count(*) FROM gb_artifacts").fetchone()[0] == artifacts


def test_a_correction_of_the_target_names_its_new_ends_and_keeps_the_old_sentence_in_the_record(
    api, db, models
):
    globex = remember(api, "Alice works at Globex.", reference_time="2024-03-01T00:00:00Z")["edges"][0]["id"]

    reply = api.request("PATCH", f"/v1/gb/edges/{globex}?user_id=u1", {"target": "Initech"})

    assert reply.status == 200, reply.json
    edge = reply.json["edge"]
    assert (edge["target"], edge["description"]) == ("Initech", "Alice works at Initech.")
    record = json.loads(
        db.execute("SELECT text FROM gb_artifacts WHERE id = %s", [reply.json["artifact_id"]]).fetchone()[0]
    )
    assert record["previous"]["description"] == "Alice works at Globex."
    # A text said before the correction that arrives after it: the correction holds.
    remember(api, "Alice works at Globex.", reference_time="2024-06-01T00:00:00Z")
    assert context_targets(api) == ["Initech"]


def test_a_correction_of_the_relation_names_the_new_relation(api, db, models):
    edge_id = remember(api, "Alice knows Bob.")["edges"][0]["id"]

    reply = api.request("PATCH", f"/v1/gb/edges/{edge_id}", {"user_id": "u1", "relation": "Works With"})

    assert reply.status == 200, reply.json
    assert (reply.json["edge"]["relation"], reply.json["edge"]["description"]) == (
        "works_with",
        "Alice works with Bob.",
    )


@pytest.mark.parametrize(
    ("query", "body", "status"),
    [
        ("?user_id=u1", {"description": "Alice leads Acme."}, 200),
        ("", {"user_id": "u1", "description": "Alice leads Acme."}, 200),
        ("?user_id=u1", {"user_id": "u1", "description": "Alice leads Acme."}, 200),
        ("?user_id=u2", {"user_id": "u1", "description": "Alice leads Acme."}, 400),
        ("", {"description": "Alice leads Acme."}, 400),
        ("?user_id=u2", {"description": "Alice leads Acme."}, 404),
    ],
)
def test_a_correction_takes_its_user_from_the_query_string_or_the_body(api, db, models, query, body, status):
    edge_id = remember(api, "Alice works at Acme.")["edges"][0]["id"]

    reply = api.request("PATCH", f"/v1/gb/edges/{edge_id}{query}", body)

    assert reply.status == status, reply.json


def test_forgetting_the_text_that_moved_a_start_back_gives_the_fact_the_start_the_others_said(
    api, db, models
):
    first = remember(api, "Alice works at Acme.", reference_time="2020-01-01T00:00:00Z")["edges"][0]["id"]
    earlier = remember(api, "Alice joined Acme in 2018.", reference_time="2024-01-01T00:00:00Z")
    assert earlier["edges"][0]["id"] == first and edge_row(db, first)[1] == "2018-01-01"

    assert api.request("DELETE", f"/v1/gb/artifacts/{earlier['artifact_id']}?user_id=u1").status == 200

    assert edge_row(db, first) == ("Acme", "2020-01-01", None, False, None)


def test_forgetting_the_fact_that_superseded_another_never_revives_it(api, db, models):
    acme = remember(api, "Alice works at Acme.", reference_time="2020-01-01T00:00:00Z")["edges"][0]["id"]
    globex = remember(api, "Alice works at Globex.", reference_time="2024-01-01T00:00:00Z")["edges"][0]["id"]

    assert api.request("DELETE", f"/v1/gb/edges/{globex}?user_id=u1").status == 200

    assert edge_row(db, acme) == ("Acme", "2020-01-01", "2024-01-01", True, None)
    # A text that says it again counts as any text does: the forgotten fact no longer ends it.
    remember(api, "Alice works at Acme.", reference_time="2022-01-01T00:00:00Z")
    assert edge_row(db, acme) == ("Acme", "2020-01-01", None, False, None)
