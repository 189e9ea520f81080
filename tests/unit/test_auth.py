"""Whose data a request may touch (api/auth.py): in jwt mode the user is the token's subject, a
request naming another user is refused, one naming none gets the subject's user_id; in iam and
none modes the request is served as it comes."""

from __future__ import annotations

import base64
import json

import pytest

from gligabao.api.auth import authorized, token_subject
from gligabao.errors import Forbidden, Unauthorized


def event(*, sub: str | None = "u1", body: dict | str | None = None, query: dict | None = None) -> dict:
    """A payload 2.0 event as API Gateway passes it after its JWT authorizer (sub None: no claims)."""
    result: dict = {"version": "2.0", "rawPath": "/v1/gb/remember", "requestContext": {"requestId": "r1"}}
    if sub is not None:
        result["requestContext"]["authorizer"] = {"jwt": {"claims": {"sub": sub, "iss": "x"}, "scopes": None}}
    if body is not None:
        result["body"] = body if isinstance(body, str) else json.dumps(body)
        result["isBase64Encoded"] = False
    if query is not None:
        result["queryStringParameters"] = query
        result["rawQueryString"] = "&".join(f"{name}={value}" for name, value in query.items())
    return result


def test_the_subject_is_the_sub_claim_api_gateway_passes():
    assert token_subject(event(sub="7d3f-u1")) == "7d3f-u1"


@pytest.mark.parametrize(
    "context",
    [
        {},
        {"authorizer": None},
        {"authorizer": {"iam": {"userArn": "arn:aws:iam::1:user/x"}}},
        {"authorizer": {"jwt": {"claims": {"iss": "x"}}}},
        {"authorizer": {"jwt": {"claims": {"sub": ""}}}},
        {"authorizer": {"jwt": {"claims": {"sub": 7}}}},
    ],
)
def test_no_subject_without_a_sub_claim(context):
    assert token_subject({"requestContext": context}) is None


@pytest.mark.parametrize("mode", ["iam", "none"])
def test_iam_and_none_modes_serve_the_request_as_it_comes(mode):
    request = event(sub=None, body={"user_id": "u2", "text": "Alice"}, query={"user_id": "u3"})

    assert authorized(request, mode) is request


@pytest.mark.parametrize("mode", ["iam", "none"])
def test_a_jwt_authorizer_is_obeyed_whatever_the_mode(mode):
    with pytest.raises(Forbidden):
        authorized(event(sub="u1", body={"user_id": "u2", "text": "Alice"}), mode)
    with pytest.raises(Unauthorized):
        authorized({"requestContext": {"authorizer": {"jwt": {"claims": {"iss": "x"}}}}}, mode)
    served = authorized(event(sub="u1", body={"text": "Alice"}), mode)
    assert json.loads(served["body"])["user_id"] == "u1"


def test_jwt_mode_without_a_subject_is_401():
    with pytest.raises(Unauthorized) as refused:
        authorized(event(sub=None, body={"user_id": "u1", "text": "Alice"}), "jwt")

    assert refused.value.status == 401


@pytest.mark.parametrize(
    ("body", "query"),
    [
        ({"user_id": "u2", "text": "Alice"}, None),
        (None, {"user_id": "u2"}),
        ({"user_id": "u1", "text": "Alice"}, {"user_id": "u2"}),
        ({"user_id": "u2", "text": "Alice"}, {"user_id": "u1"}),
        ({"user_id": "u1 ", "text": "Alice"}, None),  # a lookalike is another user
        ({"user_id": 1, "text": "Alice"}, None),
        (None, {"user_id": "u1,u2"}),  # ?user_id=u1&user_id=u2, as API Gateway joins it
        ('{"user_id": "u1", "user_id": "u2", "text": "Alice"}', None),  # the route reads the last
    ],
)
def test_jwt_mode_naming_another_user_is_403(body, query):
    with pytest.raises(Forbidden) as refused:
        authorized(event(sub="u1", body=body, query=query), "jwt")

    assert refused.value.status == 403


def test_jwt_mode_sees_the_user_of_a_base64_body():
    request = event(sub="u1")
    request["body"] = base64.b64encode(json.dumps({"user_id": "u2", "text": "Alice"}).encode()).decode()
    request["isBase64Encoded"] = True

    with pytest.raises(Forbidden):
        authorized(request, "jwt")


def test_jwt_mode_naming_the_subject_keeps_the_request():
    served = authorized(
        event(sub="u1", body={"user_id": "u1", "text": "Alice"}, query={"user_id": "u1"}), "jwt"
    )

    assert json.loads(served["body"]) == {"user_id": "u1", "text": "Alice"}
    assert served["queryStringParameters"] == {"user_id": "u1"}
    assert served["rawQueryString"] == "user_id=u1"


def test_jwt_mode_fills_in_the_subject_where_the_body_names_no_user():
    served = authorized(event(sub="u 1", body={"text": "Alice", "dataset": "work"}), "jwt")

    assert json.loads(served["body"]) == {"user_id": "u 1", "text": "Alice", "dataset": "work"}


def test_jwt_mode_fills_in_the_subject_where_the_query_names_no_user():
    served = authorized(event(sub="u 1", query={"dataset": "main"}), "jwt")

    assert served["queryStringParameters"] == {"dataset": "main", "user_id": "u 1"}
    assert served["rawQueryString"] == "dataset=main&user_id=u+1"


def test_jwt_mode_leaves_a_body_that_is_not_a_json_object_to_the_route():
    for body in ("{not json", "[1, 2]", '"text"'):
        assert authorized(event(sub="u1", body=body), "jwt")["body"] == body
