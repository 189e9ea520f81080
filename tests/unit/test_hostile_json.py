"""Pathological JSON an attacker would send: each is a 400 naming the problem, never a 500 (the
body parser of every route, and the whole remember handler in-process)."""

import json

import pytest
from conftest import ROOT, reconfigure

from gligabao.api.app import strict_json_body
from gligabao.api.remember_models import RememberRequest
from gligabao.errors import BadRequest
from gligabao.local.server import LocalApi
from gligabao.memory.temporal import parse_fact_time

HOSTILE_BODIES = [
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 32 levels"),
    ('{"user_id": "u1", "text": "a", "x": ' + "[" * 900 + "]" * 900 + "}", "nested deeper than 32 levels"),
    ('{"a": ' * 33 + "1" + "}" * 33, "nested deeper than 32 levels"),
    ('{"user_id": "u1", "text": ' + "1" * 5000 + "}", "a number has 5000 digits"),
    ('{"user_id": "u1", "text": -' + "9" * 4301 + "}", "a number has 4301 digits"),
    ('{"geo_radius_km": ' + "1" * 5000 + ".5}", "out of range"),
    ('{"geo_radius_km": 1e999}', 'the number "1e999" is out of range'),
    ('{"geo_radius_km": -1e999}', "out of range"),
    ('{"geo_radius_km": NaN}', "NaN is not a JSON number"),
    ('{"geo_radius_km": Infinity}', "Infinity is not a JSON number"),
    ('{"geo_radius_km": -Infinity}', "-Infinity is not a JSON number"),
    ('{"user_id": "u1", "user_id": "u2"}', 'duplicate key "user_id"'),
    ('{"reasoning": {"extract": "low", "extract": "high"}}', 'duplicate key "extract"'),
    ('{"user_id": "\\ud800"}', "user_id: strings must not contain NUL characters or unpaired surrogates"),
    ('{"\\udfff": 1}', "strings must not contain NUL characters or unpaired surrogates"),
    ('{"models": {"extract": "a\\u0000"}}', "models.extract: strings must not contain NUL"),
]


@pytest.mark.parametrize(("text", "problem"), HOSTILE_BODIES, ids=[p for _, p in HOSTILE_BODIES])
def test_pathological_json_is_refused_naming_the_problem(text, problem):
    with pytest.raises(BadRequest) as refused:
        strict_json_body(text)

    assert refused.value.status == 400
    assert problem in refused.value.message


def test_json_nested_to_the_limit_is_read():
    assert strict_json_body('{"a": ' * 31 + "[1]" + "}" * 31)


def test_numbers_json_can_hold_are_read():
    body = strict_json_body('{"a": 1e308, "b": -0.0, "c": ' + "9" * 4300 + ', "d": 2.5e-324}')

    assert body["a"] == 1e308 and body["c"] == int("9" * 4300)


@pytest.mark.parametrize(("text", "problem"), HOSTILE_BODIES[:12], ids=[p for _, p in HOSTILE_BODIES[:12]])
def test_the_remember_function_answers_pathological_json_with_a_400(text, problem):
    api = LocalApi(ROOT / "template.yaml")

    status, _, raw = api.invoke(
        "POST", "/v1/gb/remember", {"content-type": "application/json"}, text.encode(), "-"
    )

    assert status == 400
    assert problem in json.loads(raw)["error"]


@pytest.mark.parametrize(
    "moment", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00.5+00:01"]
)
def test_a_reference_time_outside_the_calendar_once_in_utc_is_a_400(moment):
    api = LocalApi(ROOT / "template.yaml")
    body = json.dumps({"user_id": "u1", "text": "Alice", "reference_time": moment}).encode()

    status, _, raw = api.invoke("POST", "/v1/gb/remember", {"content-type": "application/json"}, body, "-")

    assert status == 400
    assert json.loads(raw) == {"error": "reference_time must fall within the years 1 to 9999 in UTC"}


@pytest.mark.parametrize(
    "moment", ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-14:00", "9999-12-31T23:59:59Z"]
)
def test_a_reference_time_at_the_calendar_edges_is_accepted(moment):
    assert RememberRequest.model_validate({"user_id": "u1", "text": "Alice", "reference_time": moment})


def test_a_fact_time_the_model_writes_outside_the_calendar_is_dropped_not_a_crash():
    assert parse_fact_time("0001-01-01T00:00:00+14:00") is None
    assert parse_fact_time("9999-12-31T23:59:59-12:00") is None
    assert parse_fact_time("9999-12-31") is not None


DEEP = ("[" * 100_000 + "]" * 100_000).encode()


def test_a_deeply_nested_body_with_an_idempotency_key_is_a_400():
    api = LocalApi(ROOT / "template.yaml")
    headers = {"content-type": "application/json", "idempotency-key": "k1"}

    status, _, raw = api.invoke("POST", "/v1/gb/remember", headers, DEEP, "-")

    assert status == 400 and "nested deeper than 32 levels" in json.loads(raw)["error"]


@pytest.mark.parametrize("body", [DEEP, b'{"user_id": "u1", "user_id": "u1", "text": "Alice"}'])
def test_with_jwt_auth_a_body_the_routes_refuse_is_a_400_not_a_crash(body):
    from gligabao.local.server import LambdaContext, build_event

    reconfigure(auth_mode="jwt")
    api = LocalApi(ROOT / "template.yaml")
    route, params = api.find_route("POST", "/v1/gb/remember")
    event = build_event(
        route, params, "POST", "/v1/gb/remember", "", {"content-type": "application/json"}, body, "-"
    )
    event["requestContext"]["authorizer"] = {"jwt": {"claims": {"sub": "u1"}}}

    reply = api.handler_of(route)(event, LambdaContext(route.function, "r1"))

    assert reply["statusCode"] == 400
    assert "invalid JSON body" in json.loads(reply["body"])["error"]


def test_a_method_remember_is_not_served_with_is_a_405_whatever_its_idempotency_key():
    api = LocalApi(ROOT / "template.yaml")
    headers = {"content-type": "application/json", "idempotency-key": "\u00e9" * 300}

    status, response_headers, _ = api.invoke("TRACE", "/v1/gb/remember", headers, b"{}", "-")

    assert status == 405 and response_headers["allow"] == "POST"
