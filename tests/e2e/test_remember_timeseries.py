"""remember with `timeseries` (the gligabao server's field): series stored with the text in its
transaction (a series without anchors on the text's artifact, entity selectors matching what the
text yields), an observation of each remembered as a text of its own (`observations`), a fetch
without a provider a 503 before any model call, and query's context showing the series anchored
to its entities within the token budget."""

from __future__ import annotations

import pytest
from conftest import count_rows
from fakes.anthropic_server import Reply
from graph_rows import nothing_stored
from remember_helpers import stages_called

ACME = {
    "key": "ACME.close",
    "name": "Acme close",
    "unit": "USD",
    "points": [
        ["2025-05-01T00:00:00Z", 10.5],
        ["2025-05-02T00:00:00Z", 11.0],
        ["2025-05-03T00:00:00Z", 9.75],
    ],
    "anchors": [{"entity": {"name": "Acme"}}],
}
METRIC = {"key": "doc.metric", "points": [["2025-05-01T00:00:00Z", 1]]}
TEXT = "Alice works at Acme."


def remember(api, timeseries: dict, **more):
    return api.post("/v1/gb/remember", {"user_id": "u1", "text": TEXT, "timeseries": timeseries, **more})


def test_series_are_stored_with_the_text_anchored_to_what_it_yields_or_to_its_artifact(api, db, models):
    reply = remember(api, {"series": [ACME, METRIC]})

    assert reply.status == 200, reply.json
    body = reply.json
    acme = next(e["id"] for e in body["entities"] if e["name"] == "Acme")
    acme_series, metric = body["series"]
    assert (acme_series["key"], acme_series["created"], acme_series["points"]) == ("ACME.close", True, 3)
    assert [(a["type"], a["id"]) for a in acme_series["anchors"]] == [("entity", acme)]
    assert [(a["type"], a["id"]) for a in metric["anchors"]] == [("artifact", body["artifact_id"])]
    stats = acme_series["stats"]
    assert (stats["count"], stats["first"], stats["last"], stats["min"], stats["max"]) == (
        3,
        10.5,
        9.75,
        9.75,
        11,
    )
    assert count_rows(db, "gb_series_points") == 4
    assert "series_observations" not in body


def test_an_anchor_that_names_nothing_stores_nothing_of_the_text(api, db, models):
    unknown = {**ACME, "anchors": [{"entity_id": 999999}]}

    reply = remember(api, {"series": [unknown]})

    assert 400 <= reply.status < 500, reply.json
    assert "999999" in reply.json["error"]
    assert nothing_stored(db) and count_rows(db, "gb_series") == 0


def test_each_series_is_observed_by_a_text_remembered_after_the_text(api, db, models):
    fake_anthropic, _ = models

    reply = remember(api, {"series": [ACME, METRIC], "observations": True})

    assert reply.status == 200, reply.json
    body = reply.json
    first, second = body["series_observations"]
    assert (first["key"], first["parent_artifact_id"], first["from"], first["to"]) == (
        "ACME.close",
        body["artifact_id"],
        "2025-05-01T00:00:00Z",
        "2025-05-03T00:00:00Z",
    )
    assert first["text"].startswith(
        "Observation of the timeseries Acme close (key ACME.close, unit USD) about Acme"
    )
    assert "from 10.5 USD on 2025-05-01 to 9.75 USD on 2025-05-03 (-7.14%)" in first["text"]
    assert "on 2025-05-01 its value was 1." in second["text"]
    rows = db.execute(
        "SELECT id, kind, text, series_id, derived_from, reference_time FROM gb_artifacts WHERE kind = 'series_observation' ORDER BY id"
    ).fetchall()
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [
        (first["artifact_id"], first["text"], first["series_id"], body["artifact_id"]),
        (second["artifact_id"], second["text"], second["series_id"], body["artifact_id"]),
    ]
    assert rows[0][5].isoformat() == "2025-05-03T00:00:00+00:00"  # as of its last point
    assert stages_called(fake_anthropic).count("extract") == 3  # the text's, then one per observation


def test_a_failed_observation_leaves_the_text_and_its_series_and_says_why(api, db, models):
    fake_anthropic, _ = models
    acme = {"name": "Acme", "type": "organization", "description": ""}
    fake_anthropic.queue(Reply(data={"entities": [acme], "edges": []}))  # the text's extraction
    fake_anthropic.queue(Reply.error(500), times=3)  # the observation's, retried

    reply = remember(api, {"series": [ACME], "observations": True})

    assert reply.status == 200, reply.json
    [observation] = reply.json["series_observations"]
    assert "artifact_id" not in observation and "stage extract" in observation["error"]
    assert count_rows(db, "gb_series") == 1
    assert db.execute("SELECT count(*) FROM gb_artifacts WHERE kind = 'series_observation'").fetchone() == (
        0,
    )


def test_a_fetch_without_a_timeseries_provider_is_a_503_before_any_model_call(api, db, models):
    fake_anthropic, fake_openai = models

    reply = remember(api, {"fetch": {"providers": ["prices"], "before": "30d"}})

    assert reply.status == 503
    assert reply.json["error"] == "timeseries fetch is not available: no timeseries provider is registered"
    assert fake_anthropic.messages == [] and fake_openai.requests == []
    assert nothing_stored(db)


@pytest.mark.parametrize(
    ("timeseries", "more", "message"),
    [
        ({}, {}, "timeseries needs series, fetch or both"),
        ({"observations": True}, {}, "timeseries needs series, fetch or both"),
        ({"fetch": {"before": "bogus"}}, {}, "timeseries.fetch.before: a duration"),
        ({"series": [ACME], "extra": 1}, {}, "extra"),
        ({"series": [ACME]}, {"async": True}, "not with async"),
    ],
)
def test_a_bad_timeseries_request_is_a_400_that_stores_nothing(api, db, models, timeseries, more, message):
    reply = remember(api, timeseries, **more)

    assert reply.status == 400, reply.json
    assert message in reply.json["error"]
    assert nothing_stored(db) and count_rows(db, "gb_series") == 0


def test_timeseries_are_for_a_text_only(api, db, models):
    from image_files import image_body, image_file

    reply = api.post("/v1/gb/remember", {**image_body(image_file()), "timeseries": {"series": [METRIC]}})

    assert reply.status == 400 and reply.json["error"].endswith("timeseries does not apply to an image")


def test_a_query_shows_the_series_of_its_entities_within_the_budget(api, db, models):
    remember(api, {"series": [ACME, METRIC]})

    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?", "answer": False})

    assert reply.status == 200, reply.json
    prompt = reply.json["prompt"] if "prompt" in reply.json else str(reply.json)
    assert "<series>" in prompt and "ACME.close" in prompt and "doc.metric" not in prompt
