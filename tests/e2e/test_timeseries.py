"""Timeseries over HTTP (docs/timeseries.md): POST /v1/gb/timeseries stores series of [time, value]
points in an existing dataset, anchored to an entity, a fact or an artifact over a window; a
stored key takes new points (a time it holds takes the new value); GET /v1/gb/timeseries lists a
dataset's series with their statistics, GET /v1/gb/timeseries/{id} reads one with its points in
[from, to], GET /v1/gb/entities/{id}/timeseries an entity's. Another user's id is a 404; a bad
body is a 400 that changes nothing; forgetting what a series is anchored to forgets the series."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from conftest import count_rows, reconfigure
from remember_helpers import remember

from gligabao import bootstrap
from gligabao.limits import Limits

SERIES_TABLES = ("gb_series", "gb_series_points", "gb_series_anchors")
JAN = "2025-01-{:02d}T00:00:00Z"


def points(*pairs) -> list[list]:
    """[["2025-01-dd...", value], ...] from (day, value) pairs."""
    return [[JAN.format(day), value] for day, value in pairs]


def attach(api, series: list[dict], user_id: str = "u1", dataset: str = "main"):
    return api.post("/v1/gb/timeseries", {"user_id": user_id, "dataset": dataset, "series": series})


def alice_at_acme(api) -> dict:
    """Alice works at Acme: the entities and the fact, by name, and the artifact's id."""
    remembered = remember(api, "Alice works at Acme.", reference_time="2025-02-01T00:00:00Z")
    ids = {entity["name"]: entity["id"] for entity in remembered["entities"]}
    return {**ids, "works_at": remembered["edges"][0]["id"], "artifact": remembered["artifact_id"]}


def series_rows(db) -> dict[str, int]:
    return {table: count_rows(db, table) for table in SERIES_TABLES}


def stored_points(db, key: str) -> list[tuple[str, float]]:
    return [
        (at, value)
        for at, value in db.execute(
            """SELECT to_char(p.at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), p.value FROM gb_series_points p
               JOIN gb_series s ON s.id = p.series_id WHERE s.key = %s ORDER BY p.at""",
            [key],
        ).fetchall()
    ]


# --- attaching -------------------------------------------------------------------------------------


def test_a_series_anchored_by_entity_id_is_stored_with_its_statistics(api, db, models):
    graph = alice_at_acme(api)

    reply = attach(
        api,
        [
            {
                "key": "ACME.close",
                "unit": "USD",
                "points": points((1, 10.5), (2, 11.0), (3, 9.0), (10, 12.0)),
                "anchors": [{"entity_id": graph["Acme"]}],
            }
        ],
    )

    assert reply.status == 200, reply.json
    assert (reply.json["dataset"], reply.json["user_id"]) == ("main", "u1")
    [series] = reply.json["series"]
    assert (series["key"], series["name"], series["unit"], series["source"]) == (
        "ACME.close",
        "ACME.close",
        "USD",
        "supplied",
    )
    assert (series["created"], series["points"], series["point_count"]) == (True, 4, 4)
    assert series["anchors"] == [{"type": "entity", "id": graph["Acme"], "label": "Acme"}]
    stats = series["stats"]
    assert stats == {
        "count": 4,
        "first_ts": JAN.format(1),
        "last_ts": JAN.format(10),
        "first": 10.5,
        "last": 12.0,
        "min": 9.0,
        "min_ts": JAN.format(3),
        "max": 12.0,
        "max_ts": JAN.format(10),
        "mean": 10.625,
        "change": 1.5,
        "pct_change": pytest.approx(14.285714285714285),
        "trend": "up",
        "largest_move": {
            "from": JAN.format(3),
            "to": JAN.format(10),
            "from_value": 9.0,
            "to_value": 12.0,
            "pct": pytest.approx(33.333333333333336),
        },
    }
    assert (series["first_ts"], series["last_ts"]) == (JAN.format(1), JAN.format(10))


def test_an_entity_selector_finds_the_entity_by_its_normalized_name_and_type(api, db, models):
    graph = alice_at_acme(api)

    typed = attach(
        api,
        [
            {
                "key": "a",
                "points": points((1, 1)),
                "anchors": [{"entity": {"name": "ACME", "type": "Organization"}}],
            }
        ],
    )
    untyped = attach(
        api, [{"key": "b", "points": points((1, 1)), "anchors": [{"entity": {"name": "  acme "}}]}]
    )
    wrong_type = attach(
        api,
        [{"key": "c", "points": points((1, 1)), "anchors": [{"entity": {"name": "Acme", "type": "person"}}]}],
    )

    assert typed.status == untyped.status == 200, (typed.json, untyped.json)
    assert typed.json["series"][0]["anchors"][0]["id"] == graph["Acme"]
    assert untyped.json["series"][0]["anchors"][0]["id"] == graph["Acme"]
    assert wrong_type.status == 400
    assert wrong_type.json == {"error": 'series "c": series anchor not found: entity "Acme"'}


def test_an_edge_selector_and_an_edge_id_anchor_a_series_to_a_live_fact(api, db, models):
    graph = alice_at_acme(api)

    by_selector = attach(
        api,
        [
            {
                "key": "tenure",
                "points": points((1, 1)),
                "anchors": [{"edge": {"source": "alice", "relation": "Works At", "target": "Acme"}}],
            }
        ],
    )
    by_id = attach(
        api, [{"key": "tenure2", "points": points((1, 1)), "anchors": [{"edge_id": graph["works_at"]}]}]
    )
    unknown = attach(
        api,
        [
            {
                "key": "hates",
                "points": points((1, 1)),
                "anchors": [{"edge": {"source": "Alice", "relation": "hates", "target": "Acme"}}],
            }
        ],
    )

    assert by_selector.status == 200, by_selector.json
    assert by_selector.json["series"][0]["anchors"] == [
        {"type": "edge", "id": graph["works_at"], "label": "Alice -works_at-> Acme"}
    ]
    assert by_id.json["series"][0]["anchors"][0]["id"] == graph["works_at"]
    assert unknown.status == 400
    assert unknown.json == {"error": 'series "hates": series anchor not found: fact Alice -hates-> Acme'}


def test_an_artifact_anchor_keeps_its_window(api, db, models):
    graph = alice_at_acme(api)

    reply = attach(
        api,
        [
            {
                "key": "mentions",
                "points": points((1, 3), (2, 5)),
                "anchors": [{"artifact_id": graph["artifact"], "window": [JAN.format(1), JAN.format(31)]}],
            }
        ],
    )

    assert reply.status == 200, reply.json
    assert reply.json["series"][0]["anchors"] == [
        {
            "type": "artifact",
            "id": graph["artifact"],
            "window_start": JAN.format(1),
            "window_end": JAN.format(31),
            "window": f"{JAN.format(1)}/{JAN.format(31)}",  # as the gligabao server answers it
        }
    ]


def test_the_same_key_adds_points_and_a_time_it_holds_takes_the_new_value(api, db, models):
    graph = alice_at_acme(api)
    anchor = [{"entity_id": graph["Acme"]}]
    first = attach(
        api,
        [
            {
                "key": "R",
                "unit": "USD",
                "name": "Acme price",
                "points": points((1, 1), (2, 2)),
                "anchors": anchor,
            }
        ],
    )

    again = attach(
        api,
        [
            {
                "key": "R",
                "points": points((2, 20), (3, 3), (4, 4), (4, 5)),
                "anchors": [{"entity_id": graph["Alice"]}],
            }
        ],
    )

    assert first.status == again.status == 200, again.json
    [series] = again.json["series"]
    assert (series["id"], series["created"], series["points"], series["point_count"]) == (
        first.json["series"][0]["id"],
        False,
        3,  # the distinct times of this request: the last of two points at one time counts once
        4,
    )
    assert (series["name"], series["unit"]) == ("Acme price", "USD")  # left out: kept
    assert stored_points(db, "R") == [
        ("2025-01-01", 1.0),
        ("2025-01-02", 20.0),
        ("2025-01-03", 3.0),
        ("2025-01-04", 5.0),
    ]
    assert [a["id"] for a in series["anchors"]] == [graph["Acme"], graph["Alice"]]
    assert (series["stats"]["min"], series["stats"]["max"], series["stats"]["mean"]) == (1.0, 20.0, 7.25)


def test_an_anchor_given_again_is_one_anchor(api, db, models):
    graph = alice_at_acme(api)
    anchors = [{"entity_id": graph["Acme"]}, {"entity": {"name": "Acme"}}]

    attach(api, [{"key": "k", "points": points((1, 1)), "anchors": anchors}])
    reply = attach(api, [{"key": "k", "points": points((2, 1)), "anchors": anchors}])

    assert reply.status == 200 and len(reply.json["series"][0]["anchors"]) == 1
    assert count_rows(db, "gb_series_anchors") == 1


def test_offsets_of_one_instant_are_one_time(api, db, models):
    graph = alice_at_acme(api)

    reply = attach(
        api,
        [
            {
                "key": "k",
                "points": [["2025-01-01T02:00:00+02:00", 1], ["2025-01-01T00:00:00Z", 2]],
                "anchors": [{"entity_id": graph["Acme"]}],
            }
        ],
    )

    assert reply.status == 200, reply.json
    assert reply.json["series"][0]["point_count"] == 1 and reply.json["series"][0]["stats"]["last"] == 2


def test_the_dataset_must_exist_and_is_not_created(api, db, models):
    reply = attach(
        api, [{"key": "k", "points": points((1, 1)), "anchors": [{"entity_id": 1}]}], dataset="nope"
    )

    assert reply.status == 404 and reply.json == {"error": "dataset 'nope' not found"}
    assert count_rows(db, "gb_datasets") == 0


# --- refusals change nothing -----------------------------------------------------------------------


def every_row(db) -> dict[str, list]:
    return {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() for table in SERIES_TABLES}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"key": "k", "points": [["2025-01-01T00:00:00Z", "NaN"]]},
            "series[0]: points[0]: the value of a point must be a number",
        ),
        (
            {"key": "k", "points": [["2025-01-01T00:00:00", 1]]},
            'series[0]: points[0]: the time "2025-01-01T00:00:00" of a point',
        ),
        ({"key": "", "points": points((1, 1))}, "series[0]: key is required"),
        ({"key": "k", "points": points((1, 1)), "colour": "red"}, "series[0]: colour: unknown field"),
        ({"key": "k", "points": []}, "series[0]: points are required (at least one)"),
        (
            {"key": "k", "points": points((1, 1)), "anchors": [{"artifact": True}]},
            "series[0]: anchors[0]: artifact: this request creates no artifact",
        ),
        ({"key": "k", "points": points((1, 1))}, "series[0]: anchors are required"),
        (
            {"key": "k", "points": points((1, 1)), "anchors": [{"entity_id": 2**62}]},
            f'series "k": series anchor not found: entity {2**62}',
        ),
        (
            {"key": "k", "points": points((1, 1)), "anchors": [{"artifact_id": 2**62}]},
            f'series "k": series anchor not found: artifact {2**62}',
        ),
        (
            {"key": "k", "points": points((1, 1)), "anchors": [{"entity": {"name": "Nobody"}}]},
            'series "k": series anchor not found: entity "Nobody"',
        ),
    ],
)
def test_a_bad_series_is_a_400_naming_it_and_nothing_is_written(api, db, models, body, message):
    graph = alice_at_acme(api)
    attach(api, [{"key": "kept", "points": points((1, 1)), "anchors": [{"entity_id": graph["Acme"]}]}])
    before = every_row(db)
    good = {"key": "good", "points": points((1, 1)), "anchors": [{"entity_id": graph["Acme"]}]}

    reply = attach(api, [good, body])  # a good series beside it: the whole request is refused

    assert reply.status == 400, reply.json
    assert reply.json["error"].startswith(message.replace("series[0]", "series[1]")), reply.json
    assert every_row(db) == before


def series_with_value(value: bytes) -> bytes:
    return (
        b'{"user_id":"u1","series":[{"key":"k","points":[["2025-01-01T00:00:00Z",'
        + value
        + b']],"anchors":[{"entity_id":1}]}]}'
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"NaN", "invalid JSON body: NaN is not a JSON number"),
        (b"1e999", 'invalid JSON body: the number "1e999" is out of range'),
        (b"-Infinity", "invalid JSON body: -Infinity is not a JSON number"),
        (b"1" + b"0" * 400, "series[0]: points[0]: the value of a point must be a finite number"),
    ],
)
def test_a_value_that_is_not_a_finite_number_is_a_400(api, db, models, value, message):
    alice_at_acme(api)

    reply = api.post("/v1/gb/timeseries", raw=series_with_value(value))

    assert reply.status == 400, reply.json
    assert message in reply.json["error"]
    assert series_rows(db) == dict.fromkeys(SERIES_TABLES, 0)


def test_the_limits_default_to_the_gligabao_servers():
    limits = Limits()
    assert (limits.max_series_per_request, limits.max_points_per_series, limits.max_anchors_per_series) == (
        20,
        100_000,
        20,
    )


def test_more_series_points_or_anchors_than_the_limits_is_a_400_naming_the_limit(api, db, models):
    """At the default series and anchors limits; the points limit lowered to 3 (100,000 at the default
    would make a 5 s test of parsing)."""
    graph = alice_at_acme(api)
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"max_points_per_series": 3}))
    anchor = [{"entity_id": graph["Acme"]}]
    four_points = points((1, 1), (2, 2), (3, 3), (4, 4))

    series = attach(api, [{"key": f"k{n}", "points": points((1, 1)), "anchors": anchor} for n in range(21)])
    point = attach(api, [{"key": "k", "points": four_points, "anchors": anchor}])
    anchors = attach(api, [{"key": "k", "points": points((1, 1)), "anchors": anchor * 21}])

    assert (series.status, point.status, anchors.status) == (400, 400, 400)
    assert "at most 20 series per request (GB_MAX_SERIES_PER_REQUEST)" in series.json["error"]
    assert "at most 3 points per series (GB_MAX_POINTS_PER_SERIES" in point.json["error"]
    assert "at most 20 anchors per series (GB_MAX_ANCHORS_PER_SERIES)" in anchors.json["error"]
    assert series_rows(db) == dict.fromkeys(SERIES_TABLES, 0)
    assert attach(api, [{"key": "k", "points": four_points[:3], "anchors": anchor}]).status == 200


def test_a_body_over_the_limit_is_a_413(api, db, models):
    graph = alice_at_acme(api)
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"timeseries_max_body_bytes": 500}))

    reply = attach(
        api,
        [
            {
                "key": "k",
                "points": points(*((day, day) for day in range(1, 29))),
                "anchors": [{"entity_id": graph["Acme"]}],
            }
        ],
    )

    assert reply.status == 413 and "larger than 500 bytes" in reply.json["error"]
    assert series_rows(db) == dict.fromkeys(SERIES_TABLES, 0)


# --- another user -----------------------------------------------------------------------------------


def test_another_user_cannot_anchor_to_an_entity_of_mine_nor_read_my_series(api, db, models):
    graph = alice_at_acme(api)
    mine = attach(
        api, [{"key": "k", "points": points((1, 1)), "anchors": [{"entity_id": graph["Acme"]}]}]
    ).json
    remember(api, "Bob lives in Rome.", user_id="u2")
    series_id = mine["series"][0]["id"]

    theirs = attach(
        api, [{"key": "k", "points": points((1, 9)), "anchors": [{"entity_id": graph["Acme"]}]}], user_id="u2"
    )
    read = api.get(f"/v1/gb/timeseries/{series_id}?user_id=u2")
    entity = api.get(f"/v1/gb/entities/{graph['Acme']}/timeseries?user_id=u2")
    listed = api.get("/v1/gb/timeseries?user_id=u2")

    assert theirs.status == 400
    assert theirs.json == {"error": f'series "k": series anchor not found: entity {graph["Acme"]}'}
    assert read.status == 404 and read.json == {"error": "timeseries not found"}
    assert entity.status == 404 and entity.json == {"error": f"entity {graph['Acme']} not found"}
    assert listed.status == 200 and listed.json["series"] == []
    assert stored_points(db, "k") == [("2025-01-01", 1.0)]


# --- reading ------------------------------------------------------------------------------------------


def test_one_series_reads_its_points_in_from_to_with_their_statistics(api, db, models):
    graph = alice_at_acme(api)
    stored = attach(
        api,
        [
            {
                "key": "k",
                "points": points((1, 10.5), (2, 11), (3, 9), (10, 12)),
                "anchors": [{"entity_id": graph["Acme"]}],
            }
        ],
    ).json["series"][0]

    whole = api.get(f"/v1/gb/timeseries/{stored['id']}?user_id=u1")
    ranged = api.get(f"/v1/gb/timeseries/{stored['id']}?user_id=u1&from={JAN.format(2)}&to={JAN.format(3)}")
    limited = api.get(f"/v1/gb/timeseries/{stored['id']}?user_id=u1&limit=2")
    empty = api.get(f"/v1/gb/timeseries/{stored['id']}?user_id=u1&from={JAN.format(20)}")

    assert whole.status == 200, whole.json
    assert whole.json["points"] == points((1, 10.5), (2, 11), (3, 9), (10, 12))
    assert whole.json["truncated"] is False and "window_stats" not in whole.json
    assert whole.json["dataset"] == "main" and whole.json["stats"]["count"] == 4
    assert ranged.json["points"] == points((2, 11), (3, 9))  # both bounds included, as the server has them
    window = ranged.json["window_stats"]
    assert (window["count"], window["first"], window["last"], window["mean"], window["trend"]) == (
        2,
        11,
        9,
        10,
        "down",
    )
    assert ranged.json["stats"]["count"] == 4  # the whole series' stay
    assert limited.json["points"] == points((1, 10.5), (2, 11)) and limited.json["truncated"] is True
    assert empty.json["points"] == [] and "window_stats" not in empty.json


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("from=yesterday", "from must be an RFC 3339 time"),
        ("to=2025-01-01", "to must be an RFC 3339 time"),
        ("limit=0", "limit must be between 1 and 100000"),
        ("limit=100001", "limit must be between 1 and 100000"),
    ],
)
def test_a_bad_range_or_limit_is_a_400(api, db, models, query, message):
    reply = api.get(f"/v1/gb/timeseries/1?user_id=u1&{query}")

    assert reply.status == 400 and reply.json["error"].startswith(message), reply.json


def test_a_dataset_lists_its_series_in_pages(api, db, models):
    graph = alice_at_acme(api)
    for n in range(5):
        attach(api, [{"key": f"k{n}", "points": points((1, n)), "anchors": [{"entity_id": graph["Acme"]}]}])

    seen, cursor = [], None
    while True:
        reply = api.get(
            "/v1/gb/timeseries?user_id=u1&limit=2" + (f"&cursor={quote(cursor)}" if cursor else "")
        )
        assert reply.status == 200, reply.json
        seen += [series["key"] for series in reply.json["series"]]
        cursor = reply.json["next_cursor"]
        if cursor is None:
            break

    assert seen == [f"k{n}" for n in range(5)]
    assert "points" not in reply.json["series"][0]
    assert api.get("/v1/gb/timeseries?user_id=u1&dataset=nope").status == 404


def test_an_entity_lists_the_series_anchored_to_it_or_to_one_of_its_facts(api, db, models):
    graph = alice_at_acme(api)
    attach(api, [{"key": "acme", "points": points((1, 1)), "anchors": [{"entity_id": graph["Acme"]}]}])
    attach(api, [{"key": "job", "points": points((1, 1)), "anchors": [{"edge_id": graph["works_at"]}]}])
    attach(api, [{"key": "text", "points": points((1, 1)), "anchors": [{"artifact_id": graph["artifact"]}]}])

    acme = api.get(f"/v1/gb/entities/{graph['Acme']}/timeseries?user_id=u1")
    alice = api.get(f"/v1/gb/entities/{graph['Alice']}/timeseries?user_id=u1")

    assert acme.status == 200, acme.json
    assert (acme.json["entity_id"], acme.json["dataset"]) == (graph["Acme"], "main")
    assert [s["key"] for s in acme.json["series"]] == ["acme", "job"]
    assert [s["key"] for s in alice.json["series"]] == ["job"]


# --- forgetting and erasure ---------------------------------------------------------------------------


def test_forgetting_the_last_anchor_forgets_the_series_and_another_anchor_keeps_it(api, db, models):
    graph = alice_at_acme(api)
    remember(api, "Bob lives in Rome.")
    bob = db.execute("SELECT id FROM gb_entities WHERE name = 'Bob'").fetchone()[0]
    attach(api, [{"key": "only_acme", "points": points((1, 1)), "anchors": [{"entity_id": graph["Acme"]}]}])
    attach(
        api,
        [
            {
                "key": "acme_and_bob",
                "points": points((1, 1)),
                "anchors": [{"entity_id": graph["Acme"]}, {"entity_id": bob}],
            }
        ],
    )

    forgotten = api.delete(f"/v1/gb/entities/{graph['Acme']}?user_id=u1")

    assert forgotten.status == 200, forgotten.json
    keys = [row[0] for row in db.execute("SELECT key FROM gb_series ORDER BY key").fetchall()]
    assert keys == ["acme_and_bob"]
    assert count_rows(db, "gb_series_points") == 1  # acme_and_bob's one point; only_acme's went with it
    assert count_rows(db, "gb_series_anchors") == 1


def test_forgetting_the_text_a_series_is_anchored_to_forgets_the_series(api, db, models):
    graph = alice_at_acme(api)
    attach(api, [{"key": "k", "points": points((1, 1)), "anchors": [{"artifact_id": graph["artifact"]}]}])

    assert api.delete(f"/v1/gb/artifacts/{graph['artifact']}?user_id=u1").status == 200

    assert series_rows(db) == dict.fromkeys(SERIES_TABLES, 0)


def test_deleting_the_dataset_leaves_no_series_row(api, db, models):
    graph = alice_at_acme(api)
    attach(api, [{"key": "k", "points": points((1, 1), (2, 2)), "anchors": [{"entity_id": graph["Acme"]}]}])

    assert api.delete("/v1/gb/datasets/main?user_id=u1").status == 204

    assert series_rows(db) == dict.fromkeys(SERIES_TABLES, 0)


def test_erasing_the_user_leaves_no_series_row_and_counts_them(api, db, models):
    graph = alice_at_acme(api)
    attach(api, [{"key": "k", "points": points((1, 1), (2, 2)), "anchors": [{"entity_id": graph["Acme"]}]}])

    reply = api.delete("/v1/gb/users/u1")

    assert reply.status == 200, reply.json
    assert series_rows(db) == dict.fromkeys(SERIES_TABLES, 0)
    assert {t: reply.json["rows"][t] for t in SERIES_TABLES} == {
        "gb_series": 1,
        "gb_series_points": 2,
        "gb_series_anchors": 1,
    }


# --- the export ---------------------------------------------------------------------------------------


def export_pages(api, **params) -> list[dict]:
    pages, cursor = [], None
    while True:
        query = "&".join(
            f"{k}={quote(str(v))}" for k, v in {**params, **({"cursor": cursor} if cursor else {})}.items()
        )
        reply = api.get(f"/v1/gb/graph?user_id=u1&{query}")
        assert reply.status == 200, reply.json
        pages.append(reply.json if params.get("format") != "graphml" else reply.raw.decode())
        cursor = reply.json["next_cursor"] if params.get("format") != "graphml" else None
        if cursor is None:
            return pages


def test_the_graph_export_holds_the_series_with_their_points_and_anchors(api, db, models):
    graph = alice_at_acme(api)
    attach(
        api,
        [
            {
                "key": "k1",
                "unit": "USD",
                "points": points((1, 1), (2, 2)),
                "anchors": [{"entity_id": graph["Acme"]}],
            },
            {"key": "k2", "points": points((3, 3)), "anchors": [{"edge_id": graph["works_at"]}]},
        ],
    )

    [whole] = export_pages(api)
    one_row_pages = export_pages(api, limit=1)

    assert [s["key"] for s in whole["series"]] == ["k1", "k2"]
    first = whole["series"][0]
    assert first["points"] == points((1, 1), (2, 2)) and first["unit"] == "USD"
    assert first["anchors"] == [{"type": "entity", "id": graph["Acme"]}]
    assert [s["key"] for page in one_row_pages for s in page["series"]] == ["k1", "k2"]
    assert len(one_row_pages) == 2 + 1 + 2  # two entities, one edge, two series


def test_the_graphml_export_holds_the_series_as_nodes(api, db, models):
    import xml.etree.ElementTree as ET

    graph = alice_at_acme(api)
    stored = attach(
        api, [{"key": "k1", "points": points((1, 1)), "anchors": [{"entity_id": graph["Acme"]}]}]
    ).json

    [document] = export_pages(api, format="graphml")

    root = ET.fromstring(document)
    ns = "{http://graphml.graphdrawing.org/xmlns}"
    node = root.find(f".//{ns}node[@id='s{stored['series'][0]['id']}']")
    data = {d.get("key"): d.text for d in node.findall(f"{ns}data")}
    assert data["s_key"] == "k1"
    assert json.loads(data["s_points"]) == points((1, 1))
    assert json.loads(data["s_anchors"]) == [{"type": "entity", "id": graph["Acme"]}]
