"""Facts as a resource (issue 41): GET /v1/gb/edges/{id} with its provenance (artifacts with their
metadata, sessions, what superseded it and what it superseded), GET /v1/gb/edges with the search's
filters in pages behind an opaque cursor, and GET /v1/gb/datasets in pages. Another user's fact is
a 404, not a 403; bad parameters are a 400."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from graph_rows import add_dataset
from remember_helpers import remember

PARIS_SAID = "2023-03-01T10:00:00Z"
BERLIN_SAID = "2025-01-31T09:00:00Z"


def get(api, path: str):
    return api.get(path)


def paris_then_berlin(api) -> tuple[dict, dict]:
    paris = remember(
        api, "Alice lives in Paris.", session_id="a", reference_time=PARIS_SAID, metadata={"src": "crm"}
    )
    berlin = remember(
        api,
        "Alice moved to Berlin in 2024.",
        session_id="b",
        reference_time=BERLIN_SAID,
        metadata={"src": "chat"},
    )
    return paris, berlin


def test_an_edge_reads_back_with_its_artifacts_sessions_and_what_superseded_what(api, db, models):
    paris, berlin = paris_then_berlin(api)
    [old], [new] = paris["edges"], berlin["edges"]

    old_body = get(api, f"/v1/gb/edges/{old['id']}?user_id=u1")
    new_body = get(api, f"/v1/gb/edges/{new['id']}?user_id=u1")

    assert old_body.status == 200, old_body.json
    body = old_body.json
    assert (body["id"], body["relation"], body["source"], body["target"], body["dataset"]) == (
        old["id"],
        "lives_in",
        "Alice",
        "Paris",
        "main",
    )
    assert [a["id"] for a in body["artifacts"]] == [paris["artifact_id"]]
    assert body["artifacts"][0]["metadata"] == {"src": "crm"}
    assert body["artifacts"][0]["session_id"] == "a"
    assert body["sessions"] == ["a"]
    assert body["superseded_by"] == new["id"] and body["superseded_by_edge"]["id"] == new["id"]
    assert body["expired_at"] is not None and body["supersedes"] == []
    assert new_body.json["superseded_by_edge"] is None
    assert [e["id"] for e in new_body.json["supersedes"]] == [old["id"]]
    assert new_body.json["sessions"] == ["b"]


def test_another_users_edge_is_a_404_like_a_missing_one(api, db, models):
    paris, _ = paris_then_berlin(api)
    edge_id = paris["edges"][0]["id"]

    theirs = get(api, f"/v1/gb/edges/{edge_id}?user_id=u2")
    missing = get(api, f"/v1/gb/edges/{2**63 - 1}?user_id=u1")

    assert theirs.status == 404 and theirs.json == {"error": f"edge {edge_id} not found"}
    assert missing.status == 404
    assert get(api, "/v1/gb/edges?user_id=u2").status == 404


def test_two_users_each_list_and_read_only_their_own_facts(api, db, models):
    mine = remember(api, "Alice lives in Paris.", metadata={"src": "crm"})
    theirs = api.post(
        "/v1/gb/remember", {"user_id": "u2", "text": "Bob lives in Rome.", "metadata": {"src": "crm"}}
    ).json

    listed_mine = get(api, "/v1/gb/edges?user_id=u1&metadata=" + quote('{"src":"crm"}')).json["edges"]
    listed_theirs = get(api, "/v1/gb/edges?user_id=u2&metadata=" + quote('{"src":"crm"}')).json["edges"]

    assert [e["id"] for e in listed_mine] == [mine["edges"][0]["id"]]
    assert [e["id"] for e in listed_theirs] == [theirs["edges"][0]["id"]]
    assert get(api, f"/v1/gb/edges/{theirs['edges'][0]['id']}?user_id=u1").status == 404
    assert get(api, f"/v1/gb/edges/{mine['edges'][0]['id']}?user_id=u2").status == 404


@pytest.mark.parametrize(
    "path",
    [
        "/v1/gb/edges/0?user_id=u1",
        "/v1/gb/edges/abc?user_id=u1",
        "/v1/gb/edges/1",
        "/v1/gb/edges?user_id=u1&relation=works_at",
        "/v1/gb/edges?user_id=u1&relations=",
        "/v1/gb/edges?user_id=u1&metadata=" + quote("[1]"),
        "/v1/gb/edges?user_id=u1&metadata=" + quote('{"a": {"b": 1}}'),
        "/v1/gb/edges?user_id=u1&metadata=not-json",
        "/v1/gb/edges?user_id=u1&valid_from=yesterday",
        "/v1/gb/edges?user_id=u1&include_expired=yes",
        "/v1/gb/edges?user_id=u1&limit=0",
        "/v1/gb/edges?user_id=u1&cursor=bm90LWEtY3Vyc29y",
        "/v1/gb/edges?user_id=u1&dataset=" + quote("bad name"),
        "/v1/gb/datasets?user_id=u1&limit=0",
        "/v1/gb/datasets?user_id=u1&cursor=" + quote("{}"),
    ],
)
def test_bad_parameters_are_a_400(api, db, models, path):
    remember(api, "Alice lives in Paris.")

    reply = get(api, path)

    assert reply.status == 400, reply.json
    assert reply.json["error"]


def test_the_list_filters_as_search_does_and_pages_with_a_cursor(api, db, models):
    paris, berlin = paris_then_berlin(api)
    remember(api, "Bob works at Acme.", session_id="b")

    def listed(query: str = "") -> list[str]:
        reply = get(api, "/v1/gb/edges?user_id=u1" + query)
        assert reply.status == 200, reply.json
        return [f"{e['source']} {e['relation']} {e['target']}" for e in reply.json["edges"]]

    assert listed() == ["Alice lives_in Berlin", "Bob works_at Acme"]  # live ones, by id
    assert listed("&include_expired=true") == [
        "Alice lives_in Paris",
        "Alice lives_in Berlin",
        "Bob works_at Acme",
    ]
    assert listed("&relations=works_at") == ["Bob works_at Acme"]
    assert listed("&session_ids=a&include_expired=true") == ["Alice lives_in Paris"]
    assert listed("&metadata=" + quote(json.dumps({"src": "chat"}))) == ["Alice lives_in Berlin"]
    assert listed("&valid_to=2024-01-01T00:00:00Z&include_expired=true") == ["Alice lives_in Paris"]
    assert listed("&created_to=2000-01-01T00:00:00Z") == []

    first = get(api, "/v1/gb/edges?user_id=u1&include_expired=true&limit=2").json
    second = get(
        api, f"/v1/gb/edges?user_id=u1&include_expired=true&limit=2&cursor={first['next_cursor']}"
    ).json
    assert [e["id"] for e in first["edges"]] == [paris["edges"][0]["id"], berlin["edges"][0]["id"]]
    assert len(second["edges"]) == 1 and second["next_cursor"] is None
    assert first["edges"][0]["artifact_ids"] == [paris["artifact_id"]]


def test_datasets_come_in_pages_and_without_a_limit_as_before(api, db):
    for name in ("a", "b", "c"):
        add_dataset(db, "u1", name)
    add_dataset(db, "u2", "other")

    everything = get(api, "/v1/gb/datasets?user_id=u1").json
    first = get(api, "/v1/gb/datasets?user_id=u1&limit=2").json
    second = get(api, f"/v1/gb/datasets?user_id=u1&limit=2&cursor={first['next_cursor']}").json

    assert everything == {"datasets": everything["datasets"]}  # one page: the body of before pages
    assert [d["name"] for d in everything["datasets"]] == ["a", "b", "c"]
    assert [d["name"] for d in first["datasets"]] == ["a", "b"] and first["next_cursor"]
    assert [d["name"] for d in second["datasets"]] == ["c"] and "next_cursor" not in second
    edges_cursor = get(api, "/v1/gb/edges?user_id=u1&dataset=a&limit=1")
    assert edges_cursor.status == 200
    mixed = get(api, f"/v1/gb/datasets?user_id=u1&cursor={quote(first['next_cursor'])}x")
    assert mixed.status == 400
