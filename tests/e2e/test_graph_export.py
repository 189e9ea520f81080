"""GET /v1/gb/graph (SPEC section 13): the export of a dataset's entities and edges with every time
they carry and the ids used everywhere else, live edges only by default, a page at a time."""

from __future__ import annotations

import base64
import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest
from conftest import reconfigure
from query_helpers import Graph

from gligabao.limits import Limits

T = datetime(2025, 1, 31, 9, 0, 0, tzinfo=UTC)
GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"


def export(api, user_id="u1", **params):
    query = "&".join(f"{name}={quote(str(value))}" for name, value in {"user_id": user_id, **params}.items())
    return api.get(f"/v1/gb/graph?{query}")


def header(reply, name: str) -> str | None:
    return next((value for key, value in reply.headers.items() if key.lower() == name), None)


def walk(api, user_id="u1", **params) -> list[dict]:
    """Every page of the export, following next_cursor."""
    pages, cursor = [], None
    while True:
        reply = export(api, user_id, **params, **({"cursor": cursor} if cursor else {}))
        assert reply.status == 200, reply.json
        pages.append(reply.json)
        cursor = reply.json["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 1000


def moved(db, user_id="u1", name="main") -> dict:
    """Alice at Acme (superseded by Globex), at Globex, knows Bob; Bob with no edge of his own."""
    graph = Graph(db, user_id, name)
    artifact = graph.text("Alice moved to Globex.")
    alice = graph.entity("Alice", "person", "engineer")
    acme, globex = graph.entity("Acme", "organization"), graph.entity("Globex", "organization")
    bob = graph.entity("Bob")
    acme_edge = graph.edge(
        alice, acme, "works_at", "Alice worked at Acme.", valid_at=T, invalid_at=T + timedelta(days=30),
        expired_at=T + timedelta(days=31), created_at=T,
    )  # fmt: skip
    globex_edge = graph.edge(
        alice, globex, "works_at", artifact_id=artifact, valid_at=T + timedelta(days=30),
        created_at=T + timedelta(days=31),
    )  # fmt: skip
    knows = graph.edge(alice, bob, "knows", created_at=T + timedelta(days=32))
    return {
        "alice": alice, "acme": acme, "globex": globex, "bob": bob, "artifact": artifact,
        "acme_edge": acme_edge, "globex_edge": globex_edge, "knows": knows,
    }  # fmt: skip


def test_the_export_has_every_entity_and_the_live_edges_with_all_their_times(api, db):
    ids = moved(db)

    reply = export(api)

    assert reply.status == 200 and header(reply, "content-type").startswith("application/json")
    page = reply.json
    assert [e["name"] for e in page["entities"]] == ["Acme", "Alice", "Bob", "Globex"]  # by name
    alice = next(e for e in page["entities"] if e["name"] == "Alice")
    assert alice["id"] == ids["alice"] and alice["type"] == "person" and alice["description"] == "engineer"
    assert alice["created_at"].endswith("Z") and alice["updated_at"].endswith("Z")
    assert [e["id"] for e in page["edges"]] == [ids["globex_edge"], ids["knows"]]  # in the order learned
    assert page["edges"][0] == {
        "id": ids["globex_edge"],
        "source_id": ids["alice"],
        "target_id": ids["globex"],
        "source": "Alice",
        "target": "Globex",
        "relation": "works_at",
        "artifact_id": ids["artifact"],
        "valid_at": "2025-03-02T09:00:00Z",
        "created_at": "2025-03-03T09:00:00Z",
    }
    assert page["next_cursor"] is None


def test_include_expired_adds_exactly_the_superseded_edges_with_their_expired_at(api, db):
    ids = moved(db)

    live = {e["id"] for e in export(api).json["edges"]}
    everything = export(api, include_expired="true").json["edges"]

    assert {e["id"] for e in everything} - live == {ids["acme_edge"]}
    acme = next(e for e in everything if e["id"] == ids["acme_edge"])
    assert (acme["valid_at"], acme["invalid_at"], acme["created_at"], acme["expired_at"]) == (
        "2025-01-31T09:00:00Z",
        "2025-03-02T09:00:00Z",
        "2025-01-31T09:00:00Z",
        "2025-03-03T09:00:00Z",
    )
    assert [e["id"] for e in export(api, include_expired="false").json["edges"]] == sorted(live)


def many(db, user_id="u1") -> None:
    """7 entities and 12 edges, a third superseded, several learned at the same instant."""
    graph = Graph(db, user_id)
    people = [graph.entity(f"Person {i}", embedding=None) for i in range(7)]
    for i in range(12):
        graph.edge(
            people[i % 7],
            people[(i * 3 + 1) % 7],
            "knows",
            created_at=T + timedelta(minutes=i // 3),  # ties: the id orders them
            expired_at=T if i % 3 == 0 else None,
            embedding=None,
        )


@pytest.mark.parametrize("include_expired", ["false", "true"])
def test_pages_of_one_row_walk_every_entity_and_edge_exactly_once_in_order(api, db, include_expired):
    many(db)
    whole = export(api, include_expired=include_expired, limit=5000).json

    pages = walk(api, include_expired=include_expired, limit=1)

    assert all(len(p["entities"]) + len(p["edges"]) == 1 for p in pages)
    assert [e for p in pages for e in p["entities"]] == whole["entities"]
    assert [e for p in pages for e in p["edges"]] == whole["edges"]
    assert len(whole["entities"]) == 7 and len(whole["edges"]) == (12 if include_expired == "true" else 8)
    assert len(pages) == len(whole["entities"]) + len(whole["edges"])


def test_pages_of_several_rows_cross_from_entities_to_edges_without_losing_a_row(api, db):
    many(db)
    whole = export(api, include_expired="true").json

    pages = walk(api, include_expired="true", limit=3)

    assert [len(p["entities"]) + len(p["edges"]) for p in pages] == [3, 3, 3, 3, 3, 3, 1]
    assert pages[2]["entities"] and pages[2]["edges"]  # one page holds the last entity and the first edges
    assert [e["id"] for p in pages for e in p["edges"]] == [e["id"] for e in whole["edges"]]


def test_a_page_too_large_for_one_response_holds_fewer_rows_and_the_walk_stays_complete(
    api, db, database_url
):
    graph = Graph(db)
    for i in range(6):
        graph.entity(f"Long {i}", description="x" * 3000, embedding=None)
    reconfigure(database_url=database_url, limits=Limits(graph_page_max_bytes=5000))

    pages = walk(api, limit=6)

    assert [len(p["entities"]) for p in pages] == [
        1,
        1,
        1,
        1,
        1,
        1,
    ]  # 6 don't fit, nor 3 (nor 2): 1 does


def test_graphml_pages_are_well_formed_documents_whose_union_is_the_export(api, db):
    ids = moved(db)
    nodes, edges, cursor = {}, {}, None
    while True:
        reply = export(
            api, format="graphml", include_expired="true", limit=3, **({"cursor": cursor} if cursor else {})
        )
        assert reply.status == 200 and header(reply, "content-type").startswith("application/graphml+xml")
        root = ET.fromstring(reply.raw)
        graph = root.find(f"{GRAPHML}graph")
        assert root.tag == f"{GRAPHML}graphml" and graph.get("edgedefault") == "directed"
        for node in graph.findall(f"{GRAPHML}node"):
            nodes[node.get("id")] = {d.get("key"): d.text for d in node.findall(f"{GRAPHML}data")}
        for edge in graph.findall(f"{GRAPHML}edge"):
            edges[edge.get("id")] = (
                edge.get("source"),
                edge.get("target"),
                {d.get("key"): d.text for d in edge.findall(f"{GRAPHML}data")},
            )
        in_document = graph.find(f"{GRAPHML}data[@key='next_cursor']")
        cursor = header(reply, "x-next-cursor")
        assert (in_document.text if in_document is not None else None) == cursor
        if cursor is None:
            break

    assert set(nodes) == {f"n{ids[name]}" for name in ("alice", "acme", "globex", "bob")}
    assert (
        nodes[f"n{ids['alice']}"]["n_name"] == "Alice"
        and nodes[f"n{ids['alice']}"]["n_description"] == "engineer"
    )
    assert set(edges) == {f"e{ids[name]}" for name in ("acme_edge", "globex_edge", "knows")}
    source, target, data = edges[f"e{ids['acme_edge']}"]
    assert (source, target) == (f"n{ids['alice']}", f"n{ids['acme']}")
    assert data == {
        "e_relation": "works_at",
        "e_description": "Alice worked at Acme.",
        "e_valid_at": "2025-01-31T09:00:00Z",
        "e_invalid_at": "2025-03-02T09:00:00Z",
        "e_created_at": "2025-01-31T09:00:00Z",
        "e_expired_at": "2025-03-03T09:00:00Z",
    }


def test_graphml_declares_every_key_it_uses_and_escapes_what_xml_cannot_hold(api, db):
    graph = Graph(db)
    graph.entity('Tom & "Jerry" <cartoon>', description="a\x01b\x0bc", embedding=None)

    root = ET.fromstring(export(api, format="graphml").raw)

    declared = {key.get("id") for key in root.findall(f"{GRAPHML}key")}
    used = {data.get("key") for data in root.iter(f"{GRAPHML}data")}
    assert used <= declared
    node = root.find(f"{GRAPHML}graph/{GRAPHML}node")
    values = {d.get("key"): d.text for d in node.findall(f"{GRAPHML}data")}
    assert values["n_name"] == 'Tom & "Jerry" <cartoon>'
    assert values["n_description"] == "a\ufffdb\ufffdc"


# --- one user never reads another's rows ------------------------------------------------------------


def test_another_users_dataset_of_the_same_name_is_never_exported(api, db):
    mine = moved(db, "u1")
    theirs = moved(db, "u2")

    pages = walk(api, "u1", include_expired="true", limit=1)

    entity_ids = {e["id"] for p in pages for e in p["entities"]}
    edge_ids = {e["id"] for p in pages for e in p["edges"]}
    assert entity_ids == {mine[n] for n in ("alice", "acme", "globex", "bob")}
    assert edge_ids == {mine[n] for n in ("acme_edge", "globex_edge", "knows")}
    assert not entity_ids & {theirs[n] for n in ("alice", "acme", "globex", "bob")}


def cursor_of(position: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(position).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "position",
    [
        {"kind": "graph-entities", "after": ""},
        {"kind": "graph-entities", "after": "a"},
        {"kind": "graph-edges", "created_at": "0001-01-01T00:00:00Z", "id": 0},
        {"kind": "graph-edges", "created_at": "2025-01-31T09:00:00Z", "id": 1},
    ],
)
def test_a_guessed_cursor_only_ever_reads_the_callers_own_dataset(api, db, position):
    moved(db, "u2")  # created first: the low ids and the early names are theirs
    mine = moved(db, "u1", "main")

    reply = export(api, "u1", include_expired="true", cursor=cursor_of(position))

    assert reply.status == 200
    mine_ids = {v for k, v in mine.items() if k != "artifact"}
    assert {e["id"] for e in reply.json["entities"] + reply.json["edges"]} <= mine_ids
    assert all(e["source_id"] in mine_ids and e["target_id"] in mine_ids for e in reply.json["edges"])


def test_a_dataset_only_another_user_has_is_404(api, db):
    moved(db, "u2", "private")

    reply = export(api, "u1", dataset="private")

    assert reply.status == 404 and set(reply.json) == {"error"}


def test_an_unknown_dataset_is_404(api, db):
    moved(db)

    reply = export(api, dataset="nope")

    assert reply.status == 404
    assert reply.json == {"error": "dataset 'nope' not found"}


# --- bad requests ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"include_expired": "yes"}, "include_expired"),
        ({"format": "xml"}, "format"),
        ({"limit": "0"}, "limit"),
        ({"limit": "5001"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": "1.5"}, "limit"),
        ({"limit": "99999999999999999999"}, "limit"),
        ({"cursor": "not a cursor"}, "cursor"),
        ({"cursor": ""}, "cursor"),
        ({"cursor": cursor_of({"edge_after": ["9999-12-31T23:59:59-01:00", 1]})}, "cursor"),
        ({"cursor": cursor_of({"edge_after": ["2025-01-31T09:00:00Z", 2**63]})}, "cursor"),
        ({"cursor": cursor_of({"edge_after": ["2025-01-31T09:00:00Z", "1"]})}, "cursor"),
        ({"cursor": cursor_of({"entity_after": "\ud800"})}, "cursor"),
        ({"cursor": cursor_of({"entity_after": "a\x00"})}, "cursor"),
        ({"cursor": cursor_of({"entity_after": 1})}, "cursor"),
        ({"cursor": cursor_of(["entity_after", "a"])}, "cursor"),
        ({"dataset": "no spaces"}, "dataset"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(api, db, params, field):
    moved(db)

    reply = export(api, **params)

    assert reply.status == 400
    assert set(reply.json) == {"error"} and field in reply.json["error"]


def test_without_user_id_is_a_400(api, db):
    reply = api.get("/v1/gb/graph")

    assert reply.status == 400 and "user_id" in reply.json["error"]


def test_the_route_is_in_the_openapi_document_with_its_parameters_and_errors():
    from gligabao.api.app import openapi_document
    from gligabao.api.routes.graph import router

    operation = openapi_document([router])["paths"]["/v1/gb/graph"]["get"]

    assert {p["name"] for p in operation["parameters"]} == {
        "user_id", "dataset", "include_expired", "format", "limit", "cursor",
    }  # fmt: skip
    assert {"200", "400", "404"} <= set(operation["responses"])
    assert set(operation["responses"]["200"]["content"]) == {"application/json", "application/graphml+xml"}
