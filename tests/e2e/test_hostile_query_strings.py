"""Query strings, path parameters and cursors over HTTP follow the rules of every input
(gligabao/inputs.py): what the POST bodies refuse with a 400, a query string or a cursor gets the
same 400, naming what is wrong, never a 500, and nothing changes."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest
from graph_rows import graph_counts
from remember_helpers import remember


def forged(position: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(position).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("entity_types=%00", "entity_types"),
        ("relations=a%00b", "relations"),
        ("metadata=" + quote(json.dumps({"a": "\u0000"})), "metadata"),
        ("metadata=" + quote('{"a": 1, "a": 2}'), "duplicate key"),
        ("metadata=" + "[" * 3000, "nested deeper"),
        ("metadata=" + quote('{"a": NaN}'), "NaN"),
        ("valid_from=2020-W01-1T00:00:00Z", "valid_from"),
        ("created_to=2024-01-01", "created_to"),
        ("%00=1", "query parameter"),
    ],
)
def test_a_hostile_edges_query_string_is_a_400_naming_it(api, db, models, query, named):
    remember(api, "Alice works at Acme.")
    counts = graph_counts(db)

    reply = api.get(f"/v1/gb/edges?user_id=u1&{query}")

    assert reply.status == 400, reply.raw
    assert named in reply.json["error"]
    assert graph_counts(db) == counts


@pytest.mark.parametrize(
    "path",
    [
        "/v1/gb/datasets?user_id=u1&cursor=" + forged({"kind": "datasets", "after": "\u0000"}),
        "/v1/gb/datasets?user_id=u1&cursor=" + forged({"kind": "datasets", "after": "\ud800"}),
        "/v1/gb/entities/1?user_id=u1&cursor="
        + forged({"kind": "entity", "valid_at": "2020-W01-1T00:00+00:00", "id": 1}),
        "/v1/gb/entities/1?user_id=u1&cursor="
        + forged({"kind": "entity", "valid_at": "2020-01-01T00:00:00+00:00:00.5", "id": 1}),
        "/v1/gb/edges?user_id=u1&cursor=" + forged({"kind": "edges", "after": 1, "extra": 2}),
        "/v1/gb/graph?user_id=u1&cursor=" + forged({"kind": "graph-entities", "after": "\u0000"}),
        "/v1/gb/sessions/a?user_id=u1&cursor="
        + forged({"kind": "session", "artifact": "1", "entity": 1, "edge": 1}),
    ],
)
def test_a_tampered_cursor_is_a_400(api, db, models, path):
    remember(api, "Alice works at Acme.", session_id="a")

    reply = api.get(path)

    assert (reply.status, reply.json) == (
        400,
        {"error": "cursor is invalid: pass the next_cursor of the previous page unchanged"},
    )


@pytest.mark.parametrize(
    ("method", "path", "named"),
    [
        ("GET", "/v1/gb/sessions/%00?user_id=u1", "session_id"),
        ("DELETE", "/v1/gb/datasets/%00?user_id=u1", "dataset"),
        ("GET", "/v1/gb/entities/1%00?user_id=u1", "entity_id"),
        ("GET", "/v1/gb/edges/%00?user_id=u1", "edge_id"),
    ],
)
def test_a_path_parameter_postgresql_cannot_store_is_a_400(api, db, models, method, path, named):
    remember(api, "Alice works at Acme.")
    counts = graph_counts(db)

    reply = api.request(method, path)

    assert reply.status == 400, reply.raw
    assert named in reply.json["error"]
    assert graph_counts(db) == counts
