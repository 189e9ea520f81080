"""Reading memory back over HTTP: a session (seeds/sessions.md, "Reading it back"), an artifact
with its chunks, an entity's timeline; pages; two users never see each other's rows."""

from __future__ import annotations

from urllib.parse import quote

from remember_helpers import paragraphs, remember

from gligabao.memory.chunking import split_text

PARIS_SAID = "2023-03-01T10:00:00Z"
BERLIN_SAID = "2025-01-31T09:00:00Z"


def read(api, path: str, user_id: str = "u1", **params) -> dict:
    query = "&".join(f"{name}={quote(str(value))}" for name, value in {"user_id": user_id, **params}.items())
    reply = api.get(f"{path}?{query}")
    assert reply.status == 200, reply.json
    return reply.json


def names(items: list[dict]) -> list[str]:
    return sorted(item["name"] for item in items)


def the_seeds_example(api) -> None:
    """Sessions a and b both remember "Alice works at Acme", then a call without a session does."""
    remember(api, "Alice works at Acme.", session_id="a")
    remember(api, "Alice works at Acme.", session_id="b")
    remember(api, "Alice works at Acme.")


# --- GET /v1/gb/sessions/{session_id} ------------------------------------------------------------


def test_the_seeds_example_reads_back_as_the_seeds_table_says(api, db, models):
    the_seeds_example(api)
    [(alice,)] = db.execute("SELECT id FROM gb_entities WHERE name = 'Alice'").fetchall()
    [(acme,)] = db.execute("SELECT id FROM gb_entities WHERE name = 'Acme'").fetchall()

    session_a = read(api, "/v1/gb/sessions/a")
    session_b = read(api, "/v1/gb/sessions/b")

    assert [a["id"] for a in session_a["artifacts"]] == [1]
    assert [a["id"] for a in session_b["artifacts"]] == [2]
    # Alice and Acme were written once, by artifact 1; session b touched them all the same
    for session in (session_a, session_b):
        assert [(e["id"], e["name"]) for e in session["entities"]] == sorted(
            [(alice, "Alice"), (acme, "Acme")]
        )
        [edge] = session["edges"]
        assert (edge["source"], edge["relation"], edge["target"], edge["artifact_id"]) == (
            "Alice",
            "works_at",
            "Acme",
            1,
        )
        assert edge["artifact_ids"] == [1, 2, 3]
        assert session["next_cursor"] is None
    assert session_b["edges"][0]["id"] == session_a["edges"][0]["id"]
    assert (session_a["session_id"], session_a["dataset"]) == ("a", "main")


def test_a_sessions_artifact_shows_its_kind_times_status_and_preview(api, db, models):
    remember(api, "Alice works at Acme.", session_id="a", reference_time=BERLIN_SAID)

    [artifact] = read(api, "/v1/gb/sessions/a")["artifacts"]

    assert artifact["kind"] == "text" and artifact["status"] == "done"
    assert artifact["reference_time"] == BERLIN_SAID and artifact["created_at"].endswith("Z")
    assert (artifact["preview"], artifact["chars"], artifact["chunks"]) == (
        "Alice works at Acme.",
        len("Alice works at Acme."),
        0,
    )


def test_a_session_lists_a_long_text_once_with_its_number_of_chunks(api, db, models):
    text = paragraphs(12, 10)
    remember(api, text, session_id="long")

    [artifact] = read(api, "/v1/gb/sessions/long")["artifacts"]

    assert artifact["chunks"] == len(split_text(text)) >= 3
    assert artifact["chars"] == len(text) and artifact["preview"] == text[:200]


def test_an_unknown_session_is_an_empty_200(api, db, models):
    the_seeds_example(api)

    body = read(api, "/v1/gb/sessions/never-used")

    assert body == {
        "session_id": "never-used",
        "dataset": "main",
        "artifacts": [],
        "entities": [],
        "edges": [],
        "next_cursor": None,
    }


def test_a_session_of_an_unknown_dataset_is_a_404(api, db, models):
    the_seeds_example(api)

    reply = api.get("/v1/gb/sessions/a?user_id=u1&dataset=notes")

    assert reply.status == 404
    assert reply.json == {"error": "dataset 'notes' not found"}


def test_a_session_is_read_in_the_dataset_named(api, db, models):
    remember(api, "Alice works at Acme.", session_id="a")
    remember(api, "Bob knows Carol.", session_id="a", dataset="notes")

    assert names(read(api, "/v1/gb/sessions/a")["entities"]) == ["Acme", "Alice"]
    assert names(read(api, "/v1/gb/sessions/a", dataset="notes")["entities"]) == ["Bob", "Carol"]


def test_the_session_in_the_path_is_percent_decoded_and_trimmed(api, db, models):
    remember(api, "Alice works at Acme.", session_id="chat 42/é")

    body = read(api, "/v1/gb/sessions/" + quote(" chat 42/é ", safe=""))

    assert body["session_id"] == "chat 42/é" and len(body["artifacts"]) == 1


def test_a_bad_session_id_in_the_path_is_a_400(api, db, models):
    remember(api, "Alice works at Acme.", session_id="a")

    too_long = api.get("/v1/gb/sessions/" + "s" * 129 + "?user_id=u1")
    blank = api.get("/v1/gb/sessions/%20%20?user_id=u1")
    control = api.get("/v1/gb/sessions/a%07b?user_id=u1")

    assert (too_long.status, blank.status, control.status) == (400, 400, 400)
    assert too_long.json == {"error": "session_id must be at most 128 bytes"}
    assert blank.json == {"error": "session_id is required"}
    assert "control characters" in control.json["error"]


# --- GET /v1/gb/artifacts/{id} -------------------------------------------------------------------


def test_an_artifact_reads_back_with_its_text_session_time_status_entities_and_edges(api, db, models):
    body = remember(api, "Alice works at Acme.", session_id="a", reference_time=BERLIN_SAID)

    artifact = read(api, f"/v1/gb/artifacts/{body['artifact_id']}")

    assert {k: artifact[k] for k in ("id", "dataset", "kind", "text", "session_id", "reference_time")} == {
        "id": body["artifact_id"],
        "dataset": "main",
        "kind": "text",
        "text": "Alice works at Acme.",
        "session_id": "a",
        "reference_time": BERLIN_SAID,
    }
    assert (artifact["status"], artifact["error"], artifact["chunks"]) == ("done", None, [])
    assert (artifact["parent_id"], artifact["chunk_index"], artifact["summary"]) == (None, None, None)
    assert names(artifact["entities"]) == ["Acme", "Alice"]
    [edge] = artifact["edges"]
    assert edge["id"] == body["edges"][0]["id"] and edge["artifact_ids"] == [body["artifact_id"]]


def test_an_artifact_that_restated_a_fact_lists_the_edge_it_did_not_create(api, db, models):
    first = remember(api, "Alice works at Acme.", session_id="a")
    second = remember(api, "Alice works at Acme.", session_id="b")

    [edge] = read(api, f"/v1/gb/artifacts/{second['artifact_id']}")["edges"]

    assert edge["artifact_id"] == first["artifact_id"]
    assert edge["artifact_ids"] == [first["artifact_id"], second["artifact_id"]]


def test_a_long_text_reads_back_with_its_chunks_their_summaries_and_what_they_stated(api, db, models):
    text = paragraphs(12, 10)
    body = remember(api, text, session_id="long")

    artifact = read(api, f"/v1/gb/artifacts/{body['artifact_id']}")

    chunks = split_text(text)
    assert artifact["text"] == text
    assert [c["index"] for c in artifact["chunks"]] == list(range(len(chunks)))
    assert [c["chars"] for c in artifact["chunks"]] == [len(c) for c in chunks]
    assert all(c["summary"].startswith("A part of a longer text about") for c in artifact["chunks"])
    # provenance names the chunks; the text's read back gathers what they stated
    assert sorted(e["source"] for e in artifact["edges"]) == sorted(f"Person{i}" for i in range(12))
    assert len(artifact["entities"]) == 13
    chunk_ids = {c["id"] for c in artifact["chunks"]}
    assert all(set(e["artifact_ids"]) <= chunk_ids for e in artifact["edges"])


def test_a_chunk_reads_back_as_an_artifact_with_its_text_summary_and_parent(api, db, models):
    text = paragraphs(12, 10)
    body = remember(api, text, session_id="long")
    first_chunk = read(api, f"/v1/gb/artifacts/{body['artifact_id']}")["chunks"][0]

    chunk = read(api, f"/v1/gb/artifacts/{first_chunk['id']}")

    assert (chunk["kind"], chunk["parent_id"], chunk["chunk_index"]) == ("chunk", body["artifact_id"], 0)
    assert chunk["text"] == split_text(text)[0] and chunk["summary"] == first_chunk["summary"]
    assert chunk["session_id"] == "long" and chunk["chunks"] == []
    assert "Person0" in names(chunk["entities"])
    assert all(chunk["id"] in e["artifact_ids"] for e in chunk["edges"])


def test_an_artifact_id_that_is_not_a_positive_integer_is_a_400(api, db, models):
    for bad in ("abc", "0", "-1", "1.5", str(2**63)):
        reply = api.get(f"/v1/gb/artifacts/{bad}?user_id=u1")
        assert reply.status == 400, bad
        assert "artifact_id" in reply.json["error"], bad


def test_an_unknown_artifact_is_a_404(api, db, models):
    remember(api, "Alice works at Acme.")

    reply = api.get(f"/v1/gb/artifacts/{2**63 - 1}?user_id=u1")

    assert reply.status == 404
    assert reply.json == {"error": f"artifact {2**63 - 1} not found"}


# --- GET /v1/gb/entities/{id}: the timeline ------------------------------------------------------


def test_an_entitys_timeline_shows_paris_superseded_by_berlin_with_all_four_times(api, db, models):
    paris = remember(api, "Alice lives in Paris.", session_id="a", reference_time=PARIS_SAID)
    berlin = remember(api, "Alice moved to Berlin in 2024.", session_id="b", reference_time=BERLIN_SAID)
    alice = paris["entities"][0]["id"]
    [paris_edge], [berlin_edge] = paris["edges"], berlin["edges"]

    body = read(api, f"/v1/gb/entities/{alice}")

    assert (body["id"], body["name"], body["type"], body["sessions"]) == (
        alice,
        "Alice",
        "person",
        ["a", "b"],
    )
    stored = {
        row[0]: row[1:]
        for row in db.execute("SELECT id, created_at, expired_at FROM gb_edges ORDER BY id").fetchall()
    }
    old, new = body["edges"]
    assert old["id"] == paris_edge["id"] and new["id"] == berlin_edge["id"]
    assert (old["relation"], old["target"], new["target"]) == ("lives_in", "Paris", "Berlin")
    assert (old["valid_at"], old["invalid_at"]) == (PARIS_SAID, "2024-01-01T00:00:00Z")
    assert (new["valid_at"], new["invalid_at"]) == ("2024-01-01T00:00:00Z", None)
    assert old["created_at"] == rfc(stored[old["id"]][0]) and old["expired_at"] == rfc(stored[old["id"]][1])
    assert old["created_at"] < old["expired_at"] and new["expired_at"] is None
    assert (old["superseded_by"], new["superseded_by"]) == (new["id"], None)
    assert (old["artifact_ids"], new["artifact_ids"]) == ([paris["artifact_id"]], [berlin["artifact_id"]])
    assert body["next_cursor"] is None


def test_remember_records_which_edge_superseded_which(api, db, models):
    paris = remember(api, "Alice lives in Paris.", reference_time=PARIS_SAID)
    berlin = remember(api, "Alice moved to Berlin in 2024.", reference_time=BERLIN_SAID)

    rows = db.execute("SELECT id, superseded_by FROM gb_edges ORDER BY id").fetchall()

    assert rows == [(paris["edges"][0]["id"], berlin["edges"][0]["id"]), (berlin["edges"][0]["id"], None)]
    assert berlin["superseded"][0]["id"] == paris["edges"][0]["id"]


def test_an_edge_only_closed_by_its_end_has_no_superseder(api, db, models):
    remember(api, "Bob joined Globex in 2019.", reference_time=PARIS_SAID)
    remember(api, "Bob left Globex in 2020.", reference_time=BERLIN_SAID)
    [(bob,)] = db.execute("SELECT id FROM gb_entities WHERE name = 'Bob'").fetchall()

    [edge] = read(api, f"/v1/gb/entities/{bob}")["edges"]

    assert (edge["invalid_at"], edge["expired_at"], edge["superseded_by"]) == (
        "2020-01-01T00:00:00Z",
        None,
        None,
    )


def test_the_timeline_includes_edges_where_the_entity_is_the_target(api, db, models):
    paris = remember(api, "Alice lives in Paris.", reference_time=PARIS_SAID)
    remember(api, "Alice moved to Berlin in 2024.", reference_time=BERLIN_SAID)
    paris_id = next(e["id"] for e in paris["entities"] if e["name"] == "Paris")

    body = read(api, f"/v1/gb/entities/{paris_id}")

    assert [(e["source"], e["target"], e["expired_at"] is not None) for e in body["edges"]] == [
        ("Alice", "Paris", True)
    ]


def test_the_timeline_is_ordered_by_valid_at_an_edge_without_one_first(api, db, models):
    timeline = arrange_timeline(db)

    body = read(api, f"/v1/gb/entities/{timeline['alice']}")

    assert [e["id"] for e in body["edges"]] == timeline["order"]
    assert body["edges"][0]["valid_at"] is None
    assert [e["valid_at"] for e in body["edges"][1:]] == sorted(e["valid_at"] for e in body["edges"][1:])


def test_an_unknown_entity_is_a_404(api, db, models):
    remember(api, "Alice works at Acme.")

    reply = api.get("/v1/gb/entities/999?user_id=u1")

    assert reply.status == 404
    assert reply.json == {"error": "entity 999 not found"}


# --- pages ---------------------------------------------------------------------------------------


def arrange_timeline(db) -> dict:
    """Alice with six edges in both directions, valid_at out of id order, one without valid_at and
    one from Alice to herself; returns her id and the edge ids in the timeline's order."""
    from graph_rows import add_dataset, add_entity

    dataset = add_dataset(db, "u1")
    alice, acme, bob = (add_entity(db, dataset, name) for name in ("Alice", "Acme", "Bob"))
    rows = [
        (alice, acme, "works_at", "2024-05-01T00:00:00Z"),
        (bob, alice, "knows", "2021-01-01T00:00:00Z"),
        (alice, bob, "knows", None),
        (alice, alice, "admires", "2024-05-01T00:00:00Z"),  # the same valid_at as the first: id decides
        (acme, alice, "employs", "2022-07-01T00:00:00Z"),
        (alice, acme, "visited", "2019-03-01T00:00:00Z"),
    ]
    ids = [
        db.execute(
            "INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, valid_at) "
            "VALUES (%s, %s, %s, %s, %s) RETURNING id",
            [dataset, source, target, relation, valid_at],
        ).fetchone()[0]
        for source, target, relation, valid_at in rows
    ]
    db.execute(
        "INSERT INTO gb_edges (dataset_id, source_id, target_id, relation) VALUES (%s, %s, %s, 'owns')",
        [dataset, bob, acme],
    )  # not Alice's
    order = [ids[2], ids[5], ids[1], ids[4], ids[0], ids[3]]
    return {"alice": alice, "order": order}


def walk(api, path: str, **params) -> list[dict]:
    pages, cursor = [], None
    while True:
        page = read(api, path, **params, **({"cursor": cursor} if cursor else {}))
        pages.append(page)
        cursor = page["next_cursor"]
        if cursor is None:
            return pages


def test_limit_1_walks_the_whole_timeline_one_edge_a_page(api, db, models):
    timeline = arrange_timeline(db)

    pages = walk(api, f"/v1/gb/entities/{timeline['alice']}", limit=1)

    assert [len(p["edges"]) for p in pages] == [1] * 6
    assert [p["edges"][0]["id"] for p in pages] == timeline["order"]
    assert all(p["name"] == "Alice" for p in pages)


def test_limit_4_gives_the_timeline_in_two_pages(api, db, models):
    timeline = arrange_timeline(db)

    pages = walk(api, f"/v1/gb/entities/{timeline['alice']}", limit=4)

    assert [[e["id"] for e in p["edges"]] for p in pages] == [timeline["order"][:4], timeline["order"][4:]]


def test_limit_1_walks_every_list_of_a_session(api, db, models):
    remember(api, "Alice works at Acme.", session_id="a")
    remember(api, "Alice knows Bob. Bob lives in Paris.", session_id="a")
    whole = read(api, "/v1/gb/sessions/a")

    pages = walk(api, "/v1/gb/sessions/a", limit=1)

    for name in ("artifacts", "entities", "edges"):
        assert [item for p in pages for item in p[name]] == whole[name], name
        assert all(len(p[name]) <= 1 for p in pages)
    assert len(pages) == max(len(whole[name]) for name in ("artifacts", "entities", "edges")) == 4


def test_the_default_page_holds_50_and_says_more_remain(api, db, models):
    from graph_rows import add_dataset, add_entity

    dataset = add_dataset(db, "u1")
    hub = add_entity(db, dataset, "Hub")
    others = [add_entity(db, dataset, f"Spoke{i}") for i in range(55)]
    for other in others:
        db.execute(
            "INSERT INTO gb_edges (dataset_id, source_id, target_id, relation) VALUES (%s, %s, %s, 'links')",
            [dataset, hub, other],
        )

    first = read(api, f"/v1/gb/entities/{hub}")
    second = read(api, f"/v1/gb/entities/{hub}", cursor=first["next_cursor"])

    assert (len(first["edges"]), len(second["edges"]), second["next_cursor"]) == (50, 5, None)


def test_a_bad_cursor_is_a_400(api, db, models):
    timeline = arrange_timeline(db)
    remember(api, "Alice works at Acme.", session_id="a")
    session_cursor = read(api, "/v1/gb/sessions/a", limit=1)["next_cursor"]
    entity_path = f"/v1/gb/entities/{timeline['alice']}"
    entity_cursor = read(api, entity_path, limit=1)["next_cursor"]

    for path, cursor in [
        (entity_path, "not-a-cursor"),
        (entity_path, "%%%"),
        (entity_path, session_cursor),  # another route's cursor
        (entity_path, entity_cursor[:-2]),
        ("/v1/gb/sessions/a", entity_cursor),
        ("/v1/gb/sessions/a", "eyJraW5kIjoic2Vzc2lvbiJ9"),  # {"kind":"session"}
        (entity_path, "eyJraW5kIjoiZW50aXR5IiwidmFsaWRfYXQiOiJ4IiwiaWQiOjF9"),  # valid_at "x"
        (entity_path, "eyJraW5kIjoiZW50aXR5IiwidmFsaWRfYXQiOiItaW5maW5pdHkiLCJpZCI6MWUzMH0"),  # id 1e30
    ]:
        reply = api.get(f"{path}?user_id=u1&cursor={quote(cursor, safe='')}")
        assert reply.status == 400, (path, cursor)
        assert reply.json["error"].startswith("cursor is invalid"), (path, cursor)


def test_a_limit_out_of_range_is_a_400(api, db, models):
    timeline = arrange_timeline(db)
    remember(api, "Alice works at Acme.", session_id="a")

    for path in (f"/v1/gb/entities/{timeline['alice']}", "/v1/gb/sessions/a"):
        for limit in ("0", "-1", "501", "many"):
            reply = api.get(f"{path}?user_id=u1&limit={limit}")
            assert reply.status == 400, (path, limit)
            assert "limit" in reply.json["error"], (path, limit)
    assert api.get(f"/v1/gb/entities/{timeline['alice']}?user_id=u1&limit=500").status == 200


# --- two users -----------------------------------------------------------------------------------


def test_another_user_reads_none_of_u1s_rows_through_any_route_with_guessed_ids(api, db, models):
    the_seeds_example(api)
    remember(api, "Alice lives in Paris.", session_id="a", reference_time=PARIS_SAID)
    remember(api, "Alice moved to Berlin in 2024.", session_id="a", reference_time=BERLIN_SAID)
    remember(api, paragraphs(12, 10), session_id="a")
    artifact_ids = [r[0] for r in db.execute("SELECT id FROM gb_artifacts").fetchall()]
    entity_ids = [r[0] for r in db.execute("SELECT id FROM gb_entities").fetchall()]
    secrets = ("Alice", "Acme", "Paris", "Berlin", "Person", "committee")

    assert api.get("/v1/gb/sessions/a?user_id=u2").status == 404  # u2 has no dataset at all
    reply = api.post("/v1/gb/remember", {"user_id": "u2", "text": "Zed knows Yan.", "session_id": "a"})
    assert reply.status == 200
    u2 = read(api, "/v1/gb/sessions/a", user_id="u2")
    assert names(u2["entities"]) == ["Yan", "Zed"] and len(u2["artifacts"]) == 1
    bodies = [u2]
    for artifact_id in artifact_ids:
        reply = api.get(f"/v1/gb/artifacts/{artifact_id}?user_id=u2")
        assert reply.status == 404, artifact_id
        bodies.append(reply.json)
    for entity_id in entity_ids:
        reply = api.get(f"/v1/gb/entities/{entity_id}?user_id=u2")
        assert reply.status == 404, entity_id
        bodies.append(reply.json)
    # u1 reading u2's rows: the same
    u2_artifact = reply_artifact_id_of(db, "u2")
    assert api.get(f"/v1/gb/artifacts/{u2_artifact}?user_id=u1").status == 404
    for (zed,) in db.execute("SELECT id FROM gb_entities WHERE name IN ('Zed', 'Yan')").fetchall():
        assert api.get(f"/v1/gb/entities/{zed}?user_id=u1").status == 404
    u1 = read(api, "/v1/gb/sessions/a")
    assert not {"Zed", "Yan"} & set(names(u1["entities"]))
    text = str(bodies)
    assert not [secret for secret in secrets if secret in text]


def reply_artifact_id_of(db, user_id: str) -> int:
    return db.execute(
        "SELECT a.id FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id WHERE d.user_id = %s",
        [user_id],
    ).fetchone()[0]


def test_a_user_id_that_differs_by_an_invisible_edge_reads_nothing(api, db, models):
    body = remember(api, "Alice works at Acme.", session_id="a")

    for user_id in ("u1%C2%A0", "%E2%80%8Bu1", "U1"):
        artifact = api.get(f"/v1/gb/artifacts/{body['artifact_id']}?user_id={user_id}")
        assert artifact.status in (400, 404), user_id
        assert "Alice" not in artifact.raw.decode(), user_id


def test_every_read_back_route_needs_a_user_id(api, db, models):
    remember(api, "Alice works at Acme.", session_id="a")

    for path in ("/v1/gb/sessions/a", "/v1/gb/artifacts/1", "/v1/gb/entities/1"):
        reply = api.get(path)
        assert reply.status == 400, path
        assert reply.json == {"error": "user_id is required"}, path


# --- the routes ----------------------------------------------------------------------------------


def test_get_and_delete_of_an_entity_go_to_their_own_functions_other_methods_are_405(api, db):
    assert api.get("/v1/gb/entities/1?user_id=u1").status == 404  # the read back: no such entity
    assert api.request("POST", "/v1/gb/entities/1?user_id=u1", {}).status == 405
    assert api.request("PUT", "/v1/gb/sessions/a?user_id=u1", {}).status == 405


def test_the_read_back_routes_are_in_the_openapi_document_with_their_errors(api, db):
    paths = api.get("/v1/gb/openapi.json").json["paths"]

    for path, errors in [
        ("/v1/gb/sessions/{session_id}", {"400", "404", "503"}),
        ("/v1/gb/artifacts/{artifact_id}", {"400", "404", "503"}),
        ("/v1/gb/entities/{entity_id}", {"400", "404", "503"}),
    ]:
        operation = paths[path]["get"]
        assert errors <= set(operation["responses"]), path
        assert operation["responses"]["200"]["content"]["application/json"]["schema"], path
        parameters = {p["name"] for p in operation["parameters"]}
        assert "user_id" in parameters, path
    for path in ("/v1/gb/sessions/{session_id}", "/v1/gb/entities/{entity_id}"):
        parameters = {p["name"] for p in paths[path]["get"]["parameters"]}
        assert {"limit", "cursor"} <= parameters, path


def rfc(moment) -> str | None:
    from gligabao.timefmt import rfc3339

    return rfc3339(moment)
