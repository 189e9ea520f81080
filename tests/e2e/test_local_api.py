"""The local API over HTTP: the contract every function shares (404, 405, 501, 413, invalid JSON),
the OpenAPI document it serves, and its access log."""

import json

import pytest
from conftest import ROOT


def test_unknown_route_is_404_with_an_error_body(api):
    reply = api.get("/v1/gb/nowhere")

    assert reply.status == 404
    assert reply.json == {"error": "not found"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/gb/datasets?user_id=u1"),
        ("GET", "/v1/gb/remember"),
        ("PUT", "/v1/gb/artifacts/3"),
        ("POST", "/v1/gb/health"),
    ],
)
def test_wrong_method_is_405(api, method, path):
    reply = api.request(method, path)

    assert reply.status == 405
    assert "not allowed" in reply.json["error"]
    allow = {name.lower(): value for name, value in reply.headers.items()}["allow"]
    assert allow == {"POST": "GET", "GET": "POST", "PUT": "DELETE, GET"}[method]


def test_openapi_document_is_served_and_lists_every_route(api):
    reply = api.get("/v1/gb/openapi.json")

    assert reply.status == 200
    document = reply.json
    assert document["info"]["title"] == "gligabao"
    for path in (
        "/v1/gb/remember",
        "/v1/gb/query",
        "/v1/gb/datasets",
        "/v1/gb/datasets/{dataset}",
        "/v1/gb/health",
        "/v1/gb/graph",
    ):
        assert path in document["paths"], path
    assert "delete" in document["paths"]["/v1/gb/datasets/{dataset}"]


def test_the_openapi_document_is_valid_openapi(api):
    from openapi_spec_validator import validate

    validate(api.get("/v1/gb/openapi.json").json)


def test_invalid_json_body_is_400_never_500(api):
    reply = api.post("/v1/gb/remember", raw=b"{not json")

    assert reply.status == 400
    assert reply.json == {"error": "invalid JSON body"}


def test_body_over_the_remember_limit_is_413(api):
    reply = api.post("/v1/gb/remember", raw=b"x" * (1024 * 1024 + 1))

    assert reply.status == 413
    assert "larger than" in reply.json["error"]


def test_body_over_the_query_limit_is_413(api):
    reply = api.post("/v1/gb/query", raw=b'{"query": "' + b"x" * (64 * 1024) + b'"}')

    assert reply.status == 413


def test_the_access_log_prints_the_path_without_the_query_string(capsys):
    import threading
    import urllib.request

    from gligabao.local.server import make_server

    server = make_server(ROOT / "template.yaml", "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/gb/nowhere?token=sk-ant-api03-abcdefghijklmnop"
        try:
            urllib.request.urlopen(url, timeout=10)
        except Exception as error:  # 404 is expected
            assert getattr(error, "code", None) == 404
    finally:
        server.shutdown()
        server.server_close()
    logged = capsys.readouterr()
    access = [json.loads(line) for line in logged.out.splitlines() if '"GET /v1/gb/nowhere 404"' in line]
    assert access and access[0]["path"] == "/v1/gb/nowhere" and access[0]["status"] == 404
    assert "sk-ant" not in logged.out + logged.err
