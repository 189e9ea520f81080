"""The local API: template routes, payload 2.0 events, and the HTTP contract every function shares."""

import json

import pytest
from conftest import ROOT

from gligabao.local.server import LocalApi, build_event, decode_result
from gligabao.local.template_routes import routes_from_template


def test_routes_come_from_the_template_with_one_function_per_route_group():
    functions = {route.function: route for route in routes_from_template(ROOT / "template.yaml")}

    code_dirs = {route.code_uri.name for route in functions.values()}
    assert {"remember", "query", "graph", "datasets", "sessions", "forget", "system"} <= code_dirs
    for route in functions.values():
        assert (route.code_uri / "app.py").is_file()


def test_the_route_of_a_request_is_chosen_as_api_gateway_does():
    api = LocalApi(ROOT / "template.yaml")

    route, params = api.find_route("DELETE", "/v1/gb/datasets/main")
    assert route.code_uri.name == "datasets" and params == {"dataset": "main"}
    assert api.find_route("GET", "/v1/gb/artifacts/7")[0].code_uri.name == "sessions"
    assert api.find_route("DELETE", "/v1/gb/artifacts/7")[0].code_uri.name == "forget"
    assert api.find_route("GET", "/v1/gb/nowhere")[0].path == "$default"


def test_event_is_an_http_api_payload_2_0():
    api = LocalApi(ROOT / "template.yaml")
    route, params = api.find_route("GET", "/v1/gb/datasets/main")

    event = build_event(
        route,
        params,
        "GET",
        "/v1/gb/datasets/main",
        "user_id=u1&x=1&x=2",
        {"Content-Type": "application/json", "Cookie": "a=1; b=2"},
        b'{"k": 1}',
        "127.0.0.1",
    )

    assert event["version"] == "2.0"
    assert event["routeKey"] == f"{route.method} {route.path}"
    assert event["rawPath"] == "/v1/gb/datasets/main"
    assert event["queryStringParameters"] == {"user_id": "u1", "x": "1,2"}
    assert event["pathParameters"] == {"dataset": "main"}
    assert event["headers"]["content-type"] == "application/json"
    assert event["cookies"] == ["a=1", "b=2"]
    assert event["requestContext"]["http"]["method"] == "GET"
    assert event["body"] == '{"k": 1}' and event["isBase64Encoded"] is False


def test_binary_bodies_are_base64_encoded_in_the_event():
    api = LocalApi(ROOT / "template.yaml")
    route, params = api.find_route("POST", "/v1/gb/remember")

    event = build_event(
        route,
        params,
        "POST",
        "/v1/gb/remember",
        "",
        {"content-type": "image/png"},
        b"\x89PNG\xff",
        "127.0.0.1",
    )

    assert event["isBase64Encoded"] is True and event["body"] == "iVBOR/8="


def test_a_bare_json_result_is_a_200():
    assert decode_result({"ok": True}) == (200, {"content-type": "application/json"}, b'{"ok": true}')


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


@pytest.mark.parametrize(
    ("method", "path", "feature"),
    [
        ("GET", "/v1/gb/graph?user_id=u1", "graph"),
        ("GET", "/v1/gb/sessions/s1?user_id=u1", "sessions"),
        ("DELETE", "/v1/gb/edges/1?user_id=u1", "forget"),
    ],
)
def test_features_not_built_yet_answer_501(api, method, path, feature):
    reply = api.request(method, path)

    assert reply.status == 501
    assert reply.json == {"error": f"{feature} is not implemented yet"}


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
    ):
        assert path in document["paths"], path
    assert "delete" in document["paths"]["/v1/gb/datasets/{dataset}"]
    assert "/v1/gb/graph" not in document["paths"]  # documented when it is built, not before


def test_the_openapi_document_is_valid_openapi(api):
    from openapi_spec_validator import validate

    validate(api.get("/v1/gb/openapi.json").json)


def test_openapi_command_prints_the_same_document(capsys):
    from gligabao.local.cli import main

    assert main(["openapi"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "/v1/gb/datasets" in printed["paths"]


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
    logged = capsys.readouterr().err
    assert "GET /v1/gb/nowhere 404" in logged
    assert "sk-ant" not in logged


def test_a_json_body_sent_as_a_form_is_read_as_json(api, fake_anthropic, fake_openai):
    # `curl -d '{...}'` sends application/x-www-form-urlencoded
    reply = api.post(
        "/v1/gb/query",
        {"user_id": "u1", "query": "Where does Alice work?"},
        headers={"content-type": "application/x-www-form-urlencoded"},
    )

    assert reply.status == 404  # read as JSON: the user has no dataset, not "user_id is required"
    assert reply.json == {"error": "dataset 'main' not found"}
