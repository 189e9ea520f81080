"""Whenever API Gateway's JWT authorizer ran, the token's subject is the only user a request may
name, whatever GB_AUTH_MODE says: a deploy that moved the API to jwt and left the functions on
iam settings must not let any valid token name any user. Each function's handler, in iam mode."""

from __future__ import annotations

import importlib.util
import json
from types import SimpleNamespace

import pytest
from conftest import ROOT, reconfigure

from gligabao.local.server import build_event

# (function, method, path, body) for each route family; every one names user u2.
REQUESTS = [
    ("remember", "POST", "/v1/gb/remember", {"user_id": "u2", "text": "Alice works at Acme."}),
    ("remember", "POST", "/v1/gb/remember/batch", {"user_id": "u2", "texts": [{"text": "Alice"}]}),
    ("remember", "POST", "/v1/gb/eval/remember", {"user_id": "u2", "text": "Alice works at Acme."}),
    ("query", "POST", "/v1/gb/query", {"user_id": "u2", "question": "Where does Alice work?"}),
    ("query", "POST", "/v1/gb/eval/query", {"user_id": "u2", "question": "Where does Alice work?"}),
    ("datasets", "GET", "/v1/gb/datasets", None),
    ("datasets", "DELETE", "/v1/gb/datasets/main", None),
    ("graph", "GET", "/v1/gb/graph", None),
    ("graph", "GET", "/v1/gb/datasets/main/graph", None),
    ("sessions", "GET", "/v1/gb/sessions/a", None),
    ("sessions", "GET", "/v1/gb/entities/e1", None),
    ("forget", "DELETE", "/v1/gb/edges/e1", None),
    ("forget", "DELETE", "/v1/gb/entities/e1", None),
    ("forget", "DELETE", "/v1/gb/users/u2", None),
    ("corrections", "PATCH", "/v1/gb/edges/1", {"user_id": "u2", "description": "Alice left Acme."}),
    ("trajectories", "GET", "/v1/gb/trajectories", None),
    ("trajectories", "GET", "/v1/gb/trajectories/t1", None),
]
FAMILIES = sorted({function for function, *_ in REQUESTS})


def function_handler(name: str):
    spec = importlib.util.spec_from_file_location(
        f"gligabao_function_{name}_jwt_tests", ROOT / "functions" / name / "app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


def jwt_event(method: str, path: str, body: dict | None, *, claims: dict) -> dict:
    """The event as API Gateway passes it after its JWT authorizer; the query string names u2
    when there is no body."""
    query = "" if body is not None else "user_id=u2"
    payload = json.dumps(body).encode() if body is not None else b""
    route = SimpleNamespace(path=path, method="ANY")
    event = build_event(
        route, {}, method, path, query, {"content-type": "application/json"}, payload, "127.0.0.1"
    )
    if body is None:
        event["queryStringParameters"] = {"user_id": "u2"}
    event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    return event


def test_every_route_family_is_covered():
    assert FAMILIES == [
        "corrections",
        "datasets",
        "forget",
        "graph",
        "query",
        "remember",
        "sessions",
        "trajectories",
    ]


@pytest.mark.parametrize(("function", "method", "path", "body"), REQUESTS)
def test_in_iam_mode_a_token_naming_another_user_is_403(function, method, path, body):
    reconfigure(auth_mode="iam")  # no database: a 403 must come before anything is read

    result = function_handler(function)(jwt_event(method, path, body, claims={"sub": "u1"}), None)

    assert result["statusCode"] == 403, result
    assert "user_id" in json.loads(result["body"])["error"]


@pytest.mark.parametrize(("function", "method", "path", "body"), REQUESTS)
def test_in_iam_mode_a_token_without_a_subject_is_401(function, method, path, body):
    reconfigure(auth_mode="iam")

    result = function_handler(function)(jwt_event(method, path, body, claims={"iss": "x"}), None)

    assert result["statusCode"] == 401, result


@pytest.mark.parametrize(
    ("function", "method", "path", "status"),
    [
        ("datasets", "GET", "/v1/gb/datasets", 200),
        ("graph", "GET", "/v1/gb/graph", 404),  # the route ran: u2 has no dataset main
        ("trajectories", "GET", "/v1/gb/trajectories", 404),  # the same
    ],
)
def test_in_iam_mode_the_subjects_own_request_is_served(db, function, method, path, status):
    reconfigure(auth_mode="iam")
    event = jwt_event(method, path, None, claims={"sub": "u2"})

    result = function_handler(function)(event, None)

    assert result["statusCode"] == status, result


def test_in_iam_mode_without_a_jwt_authorizer_the_request_names_its_user(db):
    reconfigure(auth_mode="iam")
    event = jwt_event("GET", "/v1/gb/datasets", None, claims={})
    del event["requestContext"]["authorizer"]

    result = function_handler("datasets")(event, None)

    assert result["statusCode"] == 200, result


def test_a_token_erases_no_other_user_even_without_a_user_id_in_the_query_string():
    reconfigure(auth_mode="iam")
    event = jwt_event("DELETE", "/v1/gb/users/u2", None, claims={"sub": "u1"})
    event["queryStringParameters"], event["rawQueryString"] = {}, ""

    result = function_handler("forget")(event, None)

    assert result["statusCode"] == 403, result
    assert json.loads(result["body"]) == {"error": "forbidden: only the authenticated user can be erased"}
