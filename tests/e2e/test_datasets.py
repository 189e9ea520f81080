"""GET /v1/gb/datasets and DELETE /v1/gb/datasets/{dataset}, over HTTP."""

from conftest import count_rows
from graph_rows import add_dataset, alice_works_at_acme


def test_datasets_lists_names_and_counts_of_artifacts_entities_and_live_edges(api, db):
    alice_works_at_acme(db)
    add_dataset(db, "u1", "notes")

    reply = api.get("/v1/gb/datasets?user_id=u1")

    assert reply.status == 200
    listed = reply.json["datasets"]
    assert [d["name"] for d in listed] == ["main", "notes"]
    assert {k: listed[0][k] for k in ("artifacts", "entities", "edges")} == {
        "artifacts": 1,
        "entities": 2,
        "edges": 1,
    }
    assert listed[0]["created_at"].endswith("Z")
    assert {k: listed[1][k] for k in ("artifacts", "entities", "edges")} == {
        "artifacts": 0,
        "entities": 0,
        "edges": 0,
    }


def test_datasets_of_another_user_are_never_listed(api, db):
    alice_works_at_acme(db, user_id="u2")

    assert api.get("/v1/gb/datasets?user_id=u1").json == {"datasets": []}


def test_datasets_without_user_id_is_400_naming_the_field(api, db):
    reply = api.get("/v1/gb/datasets")

    assert reply.status == 400
    assert "user_id" in reply.json["error"]


def test_delete_dataset_removes_everything_in_it_vectors_included(api, db):
    alice_works_at_acme(db)
    kept = alice_works_at_acme(db, name="kept")

    reply = api.delete("/v1/gb/datasets/main?user_id=u1")

    assert reply.status == 204  # as the gligabao server answers it
    assert reply.raw == b""
    assert [d["name"] for d in api.get("/v1/gb/datasets?user_id=u1").json["datasets"]] == ["kept"]
    for table in ("gb_artifacts", "gb_entities", "gb_edges"):
        remaining = db.execute(
            f"SELECT count(*), count(*) FILTER (WHERE dataset_id = %s) FROM {table}", [kept]
        ).fetchone()
        assert remaining[0] == remaining[1], table
    assert count_rows(db, "gb_entity_sessions") == 1
    assert count_rows(db, "gb_entity_artifacts") == 1
    assert db.execute("SELECT count(*) FROM gb_entities WHERE embedding IS NOT NULL").fetchone()[0] == 1


def test_delete_absent_dataset_is_404(api, db):
    reply = api.delete("/v1/gb/datasets/main?user_id=u1")

    assert reply.status == 404
    assert reply.json == {"error": "dataset 'main' not found"}


def test_delete_dataset_of_another_user_is_404_and_keeps_it(api, db):
    alice_works_at_acme(db, user_id="u2")

    assert api.delete("/v1/gb/datasets/main?user_id=u1").status == 404
    assert count_rows(db, "gb_entities") == 2


def test_dataset_name_rules_give_400(api, db):
    for bad in ("ba!d", "x" * 65, "with%20space"):
        reply = api.delete(f"/v1/gb/datasets/{bad}?user_id=u1")
        assert reply.status == 400, bad
        assert "dataset" in reply.json["error"]
    assert api.delete("/v1/gb/datasets/" + "x" * 64 + "?user_id=u1").status == 404
    assert api.delete("/v1/gb/datasets/a.b-c_D9?user_id=u1").status == 404
