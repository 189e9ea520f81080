"""The bi-temporal rules of remember (SPEC section 5): valid_at/invalid_at from the text,
expired_at when a contradicting fact supersedes an edge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from remember_helpers import remember

REFERENCE_TIME = "2025-01-31T09:00:00Z"


def edge_times(db, edge_id):
    return db.execute(
        "SELECT valid_at, invalid_at, expired_at FROM gb_edges WHERE id = %s", [edge_id]
    ).fetchone()


def utc(text):
    return datetime.fromisoformat(text)


def test_valid_at_defaults_to_the_reference_time(api, db, models):
    [edge] = remember(api, "Alice works at Acme.", reference_time=REFERENCE_TIME)["edges"]

    assert edge["valid_at"] == REFERENCE_TIME
    assert edge_times(db, edge["id"]) == (utc(REFERENCE_TIME), None, None)


def test_valid_at_defaults_to_now_without_reference_time(api, db, models):
    before = datetime.now(UTC)
    [edge] = remember(api, "Alice works at Acme.")["edges"]

    assert before <= utc(edge["valid_at"]) <= datetime.now(UTC)


def test_a_start_the_text_gives_is_the_valid_at(api, db, models):
    [edge] = remember(api, "Alice joined Acme in 2023.", reference_time=REFERENCE_TIME)["edges"]

    assert edge["valid_at"] == "2023-01-01T00:00:00Z"
    assert "invalid_at" not in edge


@pytest.mark.parametrize(
    ("reference_time", "invalid_at"),
    [
        ("2025-01-31T09:00:00Z", "2024-01-01T00:00:00Z"),
        ("2019-06-01T00:00:00Z", "2018-01-01T00:00:00Z"),
    ],
)
def test_relative_times_resolve_against_the_reference_time(api, db, models, reference_time, invalid_at):
    [edge] = remember(api, "Alice left Acme last year.", reference_time=reference_time)["edges"]

    assert edge["invalid_at"] == invalid_at


def test_an_edge_the_text_says_ended_gets_invalid_at_and_no_expired_at(api, db, models):
    body = remember(api, "Bob left Globex in 2020.", reference_time=REFERENCE_TIME)

    [edge] = body["edges"]
    assert edge["invalid_at"] == "2020-01-01T00:00:00Z"
    assert edge["valid_at"] is None  # it ended before the text was written; when it began is unknown
    assert edge_times(db, edge["id"])[2] is None
    assert body["superseded"] == []


def test_a_contradicted_edge_is_expired_now_and_invalid_from_the_new_facts_valid_at(api, db, models):
    paris = remember(api, "Alice lives in Paris.", reference_time="2020-01-01T00:00:00Z")["edges"][0]
    before = datetime.now(UTC)

    body = remember(api, "Alice moved to Lyon in 2024.", reference_time=REFERENCE_TIME)

    [superseded] = body["superseded"]
    assert superseded["id"] == paris["id"]
    assert superseded["invalid_at"] == "2024-01-01T00:00:00Z"
    assert before - timedelta(seconds=1) <= utc(superseded["expired_at"]) <= datetime.now(UTC)
    _, invalid_at, expired_at = edge_times(db, paris["id"])
    assert (invalid_at, expired_at) == (utc("2024-01-01T00:00:00Z"), utc(superseded["expired_at"]))
    [lyon] = body["edges"]
    assert lyon["target"] == "Lyon" and lyon["created"] is True and lyon["valid_at"] == "2024-01-01T00:00:00Z"


def test_a_contradicted_edge_without_a_new_start_is_invalid_from_the_reference_time(api, db, models):
    paris = remember(api, "Alice lives in Paris.", reference_time="2020-01-01T00:00:00Z")["edges"][0]
    before = datetime.now(UTC)

    body = remember(api, "Alice lives in Lyon.", reference_time=REFERENCE_TIME)

    [superseded] = body["superseded"]
    assert superseded.keys() == {"id", "invalid_at", "expired_at"}
    assert (superseded["id"], superseded["invalid_at"]) == (paris["id"], REFERENCE_TIME)
    # expired now: during this remember, as stored
    assert before - timedelta(seconds=1) <= utc(superseded["expired_at"]) <= datetime.now(UTC)
    assert edge_times(db, paris["id"]) == (
        utc("2020-01-01T00:00:00Z"),
        utc(REFERENCE_TIME),
        utc(superseded["expired_at"]),
    )


def test_a_contradicted_fact_that_had_ended_before_the_new_one_began_is_not_superseded(api, db, models):
    paris = api.post(
        "/v1/gb/remember",
        {
            "user_id": "u1",
            "reference_time": "2022-06-01T00:00:00Z",
            "facts": {
                "entities": [{"name": "Alice", "type": "person"}, {"name": "Paris", "type": "place"}],
                "edges": [
                    {
                        "source": "Alice",
                        "target": "Paris",
                        "relation": "lives_in",
                        "valid_at": "2020-01-01T00:00:00Z",
                        "invalid_at": "2022-05-01T00:00:00Z",
                    }
                ],
            },
        },
    ).json["edges"][0]["id"]

    body = remember(api, "Alice moved to Lyon in 2024.", reference_time=REFERENCE_TIME)

    # Their periods do not overlap: both stand, Paris ended as it was, Lyon live.
    assert body["superseded"] == []
    assert edge_times(db, paris) == (utc("2020-01-01T00:00:00Z"), utc("2022-05-01T00:00:00Z"), None)


def test_a_restatement_that_says_the_fact_ended_closes_the_stored_edge(api, db, models):
    stored = remember(api, "Alice works at Acme.", reference_time="2020-01-01T00:00:00Z")["edges"][0]

    body = remember(api, "Alice left Acme in 2024.", reference_time=REFERENCE_TIME)

    assert body["superseded"] == []
    [edge] = body["edges"]
    assert (edge["id"], edge["created"], edge["invalid_at"]) == (stored["id"], False, "2024-01-01T00:00:00Z")
    assert edge_times(db, stored["id"]) == (utc("2020-01-01T00:00:00Z"), utc("2024-01-01T00:00:00Z"), None)


@pytest.mark.parametrize(
    ("first", "second", "invalid_at"),
    [
        (("2021", "2025-01-31T09:00:00Z"), ("2024", "2025-03-01T00:00:00Z"), "2024-01-01T00:00:00Z"),
        (("2021", "2025-03-01T00:00:00Z"), ("2024", "2025-01-31T09:00:00Z"), "2021-01-01T00:00:00Z"),
    ],
)
def test_of_two_ends_of_one_fact_the_one_said_later_counts(api, db, models, first, second, invalid_at):
    stored = remember(api, f"Alice left Acme in {first[0]}.", reference_time=first[1])["edges"][0]

    [edge] = remember(api, f"Alice left Acme in {second[0]}.", reference_time=second[1])["edges"]

    assert edge["id"] == stored["id"] and edge["invalid_at"] == invalid_at


def test_the_same_relation_again_after_it_ended_is_a_new_period(api, db, models):
    ended = remember(api, "Alice left Acme in 2020.", reference_time="2021-01-01T00:00:00Z")["edges"][0]

    [edge] = remember(api, "Alice joined Acme in 2023.", reference_time=REFERENCE_TIME)["edges"]

    assert edge["created"] is True and edge["id"] != ended["id"]
    assert edge_times(db, ended["id"])[1:] == (utc("2020-01-01T00:00:00Z"), None)
