"""The local API without a server: routes from the template, payload 2.0 events, results, and the
OpenAPI command."""

import json

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
    assert api.find_route("GET", "/v1/gb/entities/7")[0].code_uri.name == "sessions"
    assert api.find_route("DELETE", "/v1/gb/entities/7")[0].code_uri.name == "forget"
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


def test_openapi_command_prints_the_same_document(capsys):
    from gligabao.local.cli import main

    assert main(["openapi"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "/v1/gb/datasets" in printed["paths"]
