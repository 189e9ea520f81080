"""Erasing a user over HTTP: DELETE /v1/gb/users/{user_id} against the local API. Every table of
the schema is read from the catalog, so a table added later whose rows an erasure leaves behind
fails here: after u1 is erased, each gb_ table holds exactly what it held before u1 stored
anything (u2's rows, unchanged)."""

from __future__ import annotations

import hashlib
import logging
import threading
from urllib.parse import quote

import pytest
from conftest import ROOT, reconfigure
from graph_rows import fill_every_table
from http_client import LocalApiClient
from jwt_keys import AUDIENCE, ISSUER, SigningKey, bearer, write_jwks
from psycopg import sql
from remember_helpers import remember

from gligabao.local.jwt_authorizer import JwtAuthorizer
from gligabao.local.server import make_server


def gb_tables(db) -> list[str]:
    """Every table of the schema but its bookkeeping (the migrations applied, the embedder of the
    vectors: no user's rows), from the catalog."""
    rows = db.execute(
        """SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname LIKE 'gb\\_%'
             AND c.relname NOT IN ('gb_schema_migrations', 'gb_embedding_space')
           ORDER BY c.relname"""
    ).fetchall()
    return [name for (name,) in rows]


def table_contents(db) -> dict[str, tuple[int, str | None]]:
    """Each gb_ table's row count and a digest of its rows (as the owner: every user's rows)."""
    contents = {}
    for table in gb_tables(db):
        contents[table] = db.execute(
            sql.SQL("SELECT count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) FROM {} AS t").format(
                sql.Identifier(table)
            )
        ).fetchone()
    return contents


def erase(api, user_id: str, **kwargs):
    return api.delete(f"/v1/gb/users/{quote(user_id, safe='')}", **kwargs)


def store_everything_of(api, db, user_id: str) -> None:
    """What the API stores for a user (a text with a session, an idempotent remember, a correction,
    an eval query's trajectory, inferences, an ontology attached to a dataset), and a row in every table besides (fill_every_table)."""
    remember(api, "Alice works at Acme.", user_id=user_id, session_id="a")
    keyed = api.post(
        "/v1/gb/remember",
        {"user_id": user_id, "text": "Bob lives in Paris.", "dataset": "second"},
        headers={"Idempotency-Key": "k1"},
    )
    assert keyed.status == 200, keyed.json
    edge = keyed.json["edges"][0]["id"]
    corrected = api.request("PATCH", f"/v1/gb/edges/{edge}", {"user_id": user_id, "target": "Lyon"})
    assert corrected.status == 200, corrected.json
    assert api.post("/v1/gb/eval/query", {"user_id": user_id, "query": "Where does Bob live?"}).status == 200
    ontology = {
        "user_id": user_id,
        "name": "people",
        "dataset": "second",  # attached: a dataset restricts its ontology's deletion
        "entity_types": [{"name": "Person"}, {"name": "Place"}],
        "relation_types": [{"name": "livesIn", "domain": ["Person"], "range": ["Place"]}],
    }
    registered = api.post("/v1/gb/ontologies", ontology)
    assert registered.status in (200, 201), registered.json


def test_erasing_a_user_leaves_no_row_of_theirs_in_any_table(api, db, models):
    store_everything_of(api, db, "u2")
    before = table_contents(db)
    store_everything_of(api, db, "u1")
    fill_every_table(db, rows=5)  # u1's rows in the tables the API cannot reach directly
    with_u1 = table_contents(db)
    assert [t for t in gb_tables(db) if with_u1[t] == before[t]] == []  # u1 has rows in every table

    reply = erase(api, "u1")

    assert reply.status == 200, reply.json
    assert table_contents(db) == before
    # The receipt: what left each table, as the database counted it, cascades included.
    erased = {t: with_u1[t][0] - before[t][0] for t in gb_tables(db) if with_u1[t][0] != before[t][0]}
    assert reply.json["rows"] == erased
    assert reply.json["user_digest"] == hashlib.sha256(b"u1").hexdigest()
    assert reply.json["jobs_cancelled"] == 0 and reply.json["erased_at"].endswith("Z")


def test_the_erasure_logs_its_receipt_with_a_digest_and_nothing_of_the_user(api, db, models, capfd, caplog):
    user, text = "subject-7f3a", "Alice confided her diagnosis to Dr Mboya."
    remember(api, text, user_id=user, session_id="private-session")
    caplog.set_level(logging.INFO)
    capfd.readouterr()
    caplog.clear()

    reply = erase(api, user)

    logged = "".join(capfd.readouterr()) + "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
    [receipt] = [r for r in caplog.records if r.getMessage() == "user.erased"]
    assert receipt.user_digest == hashlib.sha256(user.encode()).hexdigest() == reply.json["user_digest"]
    assert (receipt.rows, receipt.jobs_cancelled, receipt.erased_at) == (
        reply.json["rows"],
        0,
        reply.json["erased_at"],
    )
    assert receipt.rows["gb_artifacts"] == 1
    for secret in (user, "Alice", "Mboya", "private-session"):
        assert secret not in logged, secret


def test_erasing_again_or_a_user_never_seen_answers_the_same(api, db, models):
    remember(api, "Alice works at Acme.")
    assert erase(api, "u1").status == 200
    before = table_contents(db)

    again, nobody = erase(api, "u1"), erase(api, "nobody")
    assert (again.status, again.json["rows"], again.json["jobs_cancelled"]) == (200, {}, 0)
    assert (nobody.status, nobody.json["rows"]) == (200, {})
    assert table_contents(db) == before


def test_an_erased_user_reads_back_nothing_and_another_keeps_everything(api, db, models):
    remember(api, "Alice works at Acme.")
    remember(api, "Bob lives in Paris.", user_id="u2")

    assert erase(api, "u1").status == 200

    assert api.get("/v1/gb/datasets?user_id=u1").json["datasets"] == []
    [kept] = api.get("/v1/gb/datasets?user_id=u2").json["datasets"]
    assert (kept["name"], kept["entities"], kept["edges"]) == ("main", 2, 1)


def test_a_user_id_of_any_characters_is_erased_by_its_percent_encoding(api, db, models):
    odd = "ünïcode user/with spaces?&#"
    remember(api, "Alice works at Acme.", user_id=odd)
    remember(api, "Alice works at Acme.", user_id="ünïcode user")

    assert erase(api, odd).status == 200

    owners = db.execute("SELECT user_id FROM gb_datasets").fetchall()
    assert owners == [("ünïcode user",)]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/v1/gb/users/%20u1", "whitespace"),
        ("/v1/gb/users/u1%0A", "whitespace"),
        ("/v1/gb/users/u%00x", "control characters"),
        ("/v1/gb/users/" + "x" * 300, "at most"),
        ("/v1/gb/users/u1?user_id=u2", "names another user"),
    ],
)
def test_a_hostile_path_is_a_400_that_erases_nothing(api, db, models, path, message):
    remember(api, "Alice works at Acme.")
    before = table_contents(db)

    reply = api.delete(path)

    assert reply.status == 400, reply.json
    assert message in reply.json["error"]
    assert table_contents(db) == before


def test_other_methods_are_a_405(api, db, models):
    for method in ("GET", "POST", "PATCH"):
        reply = api.request(method, "/v1/gb/users/u1", {"user_id": "u1"})
        assert reply.status == 405 and reply.headers["allow"] == "DELETE"


# --- jwt: only the token's own subject


@pytest.fixture(scope="module")
def identity_provider() -> SigningKey:
    return SigningKey("pool-key-erase")


@pytest.fixture(scope="module")
def jwt_api_server(database_url, identity_provider, tmp_path_factory):
    jwks = write_jwks(tmp_path_factory.mktemp("idp") / "jwks.json", identity_provider)
    server = make_server(
        ROOT / "template.yaml",
        "127.0.0.1",
        0,
        quiet=True,
        authorizer=JwtAuthorizer(ISSUER, [AUDIENCE], str(jwks)),
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_under_jwt_only_the_token_s_own_subject_is_erased(api, jwt_api_server, db, models, identity_provider):
    remember(api, "Alice works at Acme.")
    remember(api, "Bob lives in Paris.", user_id="u2")
    reconfigure(auth_mode="jwt")
    jwt_api = LocalApiClient(jwt_api_server)
    before = table_contents(db)

    refused = erase(jwt_api, "u1", headers=bearer(identity_provider.token("u2")))
    named = jwt_api.delete("/v1/gb/users/u1?user_id=u1", headers=bearer(identity_provider.token("u2")))
    anonymous = erase(jwt_api, "u1")

    assert refused.status == 403 and "only the authenticated user" in refused.json["error"]
    assert named.status == 403
    assert anonymous.status == 401
    assert table_contents(db) == before

    assert erase(jwt_api, "u2", headers=bearer(identity_provider.token("u2"))).status == 200
    assert db.execute("SELECT DISTINCT user_id FROM gb_datasets").fetchall() == [("u1",)]
