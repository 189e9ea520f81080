"""Authentication over HTTP. With AuthMode jwt the local API emulates API Gateway's JWT authorizer
(a key pair of the tests' own identity provider) and the functions take the user from the token's
subject: a missing, expired, foreign-signed, wrong-audience or wrong-issuer token is API Gateway's
401 before any function runs, and a token of u2 naming u1 is a 403 that changes nothing. With
none, no token is needed; with iam (the default), requests are served as they always were."""

from __future__ import annotations

import json
import threading

import pytest
from conftest import ROOT, count_rows, reconfigure
from graph_rows import alice_works_at_acme, nothing_stored
from http_client import LocalApiClient
from image_files import image_body, png_of_exactly
from jwt_keys import AUDIENCE, ISSUER, SigningKey, bearer, write_jwks
from query_helpers import reply_citing

from gligabao.local.jwt_authorizer import JwtAuthorizer
from gligabao.local.server import make_server

API_GATEWAY_401 = {"message": "Unauthorized"}


@pytest.fixture(scope="module")
def identity_provider() -> SigningKey:
    return SigningKey("pool-key-1")


@pytest.fixture(scope="module")
def jwt_api_server(database_url, identity_provider, tmp_path_factory):
    """`gligabao serve --auth jwt --jwt-issuer ISSUER --jwt-audience AUDIENCE --jwks <file>`."""
    jwks = write_jwks(tmp_path_factory.mktemp("idp") / "jwks.json", identity_provider)
    authorizer = JwtAuthorizer(ISSUER, [AUDIENCE], str(jwks))
    server = make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True, authorizer=authorizer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def jwt_api(jwt_api_server, db):
    """A client of the local API in jwt mode, on an empty graph."""
    reconfigure(auth_mode="jwt")
    return LocalApiClient(jwt_api_server)


def events_of(output: str) -> list[dict]:
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    return [line for line in lines if str(line.get("message", "")).split(".")[-1] in ("ok", "error")]


def test_a_valid_token_remembers_and_queries_for_its_subject(jwt_api, db, models, identity_provider):
    fake_anthropic, _ = models
    token = bearer(identity_provider.token("u1"))

    remembered = jwt_api.post("/v1/gb/remember", {"text": "Alice works at Acme."}, headers=token)
    fake_anthropic.queue(reply_citing("Alice works at Acme.", edges=[1]))
    queried = jwt_api.post(
        "/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"}, headers=token
    )

    assert remembered.status == 200, remembered.json
    assert db.execute("SELECT user_id, name FROM gb_datasets").fetchall() == [("u1", "main")]
    assert queried.status == 200, queried.json
    assert queried.json["answer"] == "Alice works at Acme."


def test_a_valid_token_remembers_a_large_image_for_its_subject(jwt_api, db, models, identity_provider):
    body = image_body(png_of_exactly(3 * 1024 * 1024), caption="Alice works at Acme.")
    del body["user_id"]  # the token's subject

    reply = jwt_api.post("/v1/gb/remember", body, headers=bearer(identity_provider.token("u1")))

    assert reply.status == 200, reply.json
    assert db.execute(
        "SELECT d.user_id, i.bytes FROM gb_image_artifacts i JOIN gb_datasets d ON d.id = i.dataset_id"
    ).fetchall() == [("u1", 3 * 1024 * 1024)]


def test_a_valid_token_lists_and_deletes_its_subject_s_datasets(jwt_api, db, identity_provider):
    alice_works_at_acme(db, user_id="u1")
    alice_works_at_acme(db, user_id="u2")
    token = bearer(identity_provider.token("u1"))

    listed = jwt_api.get("/v1/gb/datasets", headers=token)
    deleted = jwt_api.delete("/v1/gb/datasets/main", headers=token)

    assert [d["name"] for d in listed.json["datasets"]] == ["main"]
    assert deleted.status == 204, deleted.raw
    assert db.execute("SELECT user_id FROM gb_datasets").fetchall() == [("u2",)]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."}),
        ("POST", "/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"}),
        ("GET", "/v1/gb/datasets?user_id=u1", None),
        ("GET", "/v1/gb/health", None),
        ("GET", "/v1/gb/nowhere", None),
    ],
)
def test_a_request_without_a_token_is_api_gateway_s_401(jwt_api, db, models, method, path, body):
    fake_anthropic, fake_openai = models

    reply = jwt_api.request(method, path, body)

    assert reply.status == 401
    assert reply.json == API_GATEWAY_401
    assert "no token" in reply.headers["www-authenticate"]
    assert nothing_stored(db) and fake_anthropic.requests == [] and fake_openai.requests == []


def _invalid_tokens(provider: SigningKey) -> dict[str, tuple[str, str]]:
    return {
        "expired": (provider.token("u1", expires_in=-60), "expired"),
        "signed by another key": (SigningKey(provider.kid).token("u1"), "not valid"),
        "wrong audience": (provider.token("u1", aud="another-client"), "audience"),
        "wrong issuer": (provider.token("u1", iss="https://idp.example.test/pool-2"), "issuer"),
    }


@pytest.mark.parametrize("case", ["expired", "signed by another key", "wrong audience", "wrong issuer"])
def test_an_invalid_token_is_api_gateway_s_401_and_changes_nothing(
    jwt_api, db, models, identity_provider, case
):
    fake_anthropic, fake_openai = models
    token, reason = _invalid_tokens(identity_provider)[case]

    reply = jwt_api.post(
        "/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Acme."}, headers=bearer(token)
    )

    assert reply.status == 401
    assert reply.json == API_GATEWAY_401
    assert reason in reply.headers["www-authenticate"]
    assert nothing_stored(db) and count_rows(db, "gb_inferences") == 0
    assert fake_anthropic.requests == [] and fake_openai.requests == []


def test_a_token_of_u2_naming_u1_is_403_and_changes_nothing(jwt_api, db, models, identity_provider, capsys):
    fake_anthropic, fake_openai = models
    alice_works_at_acme(db, user_id="u1")
    entities = count_rows(db, "gb_entities")
    token = bearer(identity_provider.token("u2"))
    capsys.readouterr()

    replies = [
        jwt_api.post("/v1/gb/remember", {"user_id": "u1", "text": "Alice works at Initech."}, headers=token),
        jwt_api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"}, headers=token),
        jwt_api.get("/v1/gb/datasets?user_id=u1", headers=token),
        jwt_api.delete("/v1/gb/datasets/main?user_id=u1", headers=token),
    ]

    for reply in replies:
        assert reply.status == 403, reply.raw
        assert reply.json == {"error": "forbidden: user_id must be the authenticated user's"}
    assert fake_anthropic.requests == [] and fake_openai.requests == []
    assert db.execute("SELECT user_id FROM gb_datasets").fetchall() == [("u1",)]
    assert count_rows(db, "gb_entities") == entities and count_rows(db, "gb_inferences") == 0
    events = events_of(capsys.readouterr().out)
    assert [(e["event"], e["status"]) for e in events] == [("remember.error", 403), ("query.error", 403)]


def test_a_valid_token_without_a_subject_is_the_function_s_401(
    jwt_api, db, models, identity_provider, capsys
):
    capsys.readouterr()

    reply = jwt_api.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": "Alice works at Acme."},
        headers=bearer(identity_provider.token(None)),
    )

    assert reply.status == 401
    assert set(reply.json) == {"error"}
    assert nothing_stored(db)
    [event] = events_of(capsys.readouterr().out)
    assert (event["event"], event["status"]) == ("remember.error", 401)


def test_none_mode_serves_requests_without_any_token(api, db):
    reconfigure(auth_mode="none")
    alice_works_at_acme(db, user_id="u1")

    reply = api.get("/v1/gb/datasets?user_id=u1")

    assert reply.status == 200
    assert [d["name"] for d in reply.json["datasets"]] == ["main"]


def test_iam_mode_serves_the_user_the_request_names_as_before(api, db, identity_provider):
    alice_works_at_acme(db, user_id="u1")

    plain = api.get("/v1/gb/datasets?user_id=u1")
    with_a_token_of_u2 = api.get("/v1/gb/datasets?user_id=u1", headers=bearer(identity_provider.token("u2")))
    unnamed = api.get("/v1/gb/datasets", headers=bearer(identity_provider.token("u1")))

    assert [d["name"] for d in plain.json["datasets"]] == ["main"]
    assert with_a_token_of_u2.json == plain.json  # API Gateway checked SigV4; a bearer token means nothing
    assert unnamed.status == 400 and "user_id" in unnamed.json["error"]


def test_an_idempotency_key_of_one_subject_never_replays_for_another(jwt_api, db, models, identity_provider):
    """The bodies are the same (no user_id): the key is scoped to the token's subject."""
    body, key = {"text": "Alice works at Acme."}, {"Idempotency-Key": "k-1"}
    u1, u2 = bearer(identity_provider.token("u1")), bearer(identity_provider.token("u2"))

    first = jwt_api.post("/v1/gb/remember", body, headers={**u1, **key})
    other = jwt_api.post("/v1/gb/remember", body, headers={**u2, **key})
    retry = jwt_api.post("/v1/gb/remember", body, headers={**u1, **key})

    assert first.status == other.status == retry.status == 200
    assert "idempotent-replayed" not in other.headers and other.raw != first.raw
    assert retry.headers["idempotent-replayed"] == "true" and retry.raw == first.raw
    assert sorted(u for (u,) in db.execute("SELECT user_id FROM gb_datasets")) == ["u1", "u2"]


def test_a_token_reads_back_only_its_subject_s_session_artifacts_and_entities(jwt_api, db, identity_provider):
    alice_works_at_acme(db, user_id="u1")
    db.execute("UPDATE gb_artifacts SET session_id = 'a'")
    theirs = bearer(identity_provider.token("u2"))
    mine = bearer(identity_provider.token("u1"))

    guessed = [jwt_api.get(path, headers=theirs) for path in ("/v1/gb/artifacts/1", "/v1/gb/entities/1")]
    named = jwt_api.get("/v1/gb/entities/1?user_id=u1", headers=theirs)
    session = jwt_api.get("/v1/gb/sessions/a", headers=theirs)
    own = jwt_api.get("/v1/gb/entities/1", headers=mine)

    assert [reply.status for reply in guessed] == [404, 404]
    assert named.status == 403 and session.status == 404  # u2 has no dataset
    assert own.status == 200 and own.json["name"] == "Alice"
    assert "Alice" not in str([reply.json for reply in (*guessed, named, session)])


def test_a_token_exports_only_its_subject_s_graph(jwt_api, db, identity_provider):
    alice_works_at_acme(db, user_id="u1")
    theirs = bearer(identity_provider.token("u2"))
    mine = bearer(identity_provider.token("u1"))

    guessed = jwt_api.get("/v1/gb/graph?include_expired=true", headers=theirs)
    named = jwt_api.get("/v1/gb/graph?user_id=u1", headers=theirs)
    own = jwt_api.get("/v1/gb/graph?include_expired=true&format=graphml", headers=mine)

    assert guessed.status == 404 and named.status == 403  # u2 has no dataset
    assert own.status == 200 and b"Alice" in own.raw and b"worked_at" in own.raw
    assert "Alice" not in str([guessed.json, named.json])
