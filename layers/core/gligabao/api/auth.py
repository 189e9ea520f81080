"""Whose data a request may touch, under the API's authentication (`GB_AUTH_MODE`).

* `iam` and `none`: the caller names the user (`user_id` in the JSON body or the query string);
  nothing changes here, unless the event carries a JWT authorizer's claims: then the token is
  checked as in jwt mode. A deploy that moved the API to jwt and left the functions on older
  settings must not let any valid token name any user.
* `jwt`: API Gateway validated the bearer token before the function ran and passed its claims in
  the event (`requestContext.authorizer.jwt.claims`); the user is the token's subject (`sub`). No
  subject is a 401. A request naming another user, in the body or the query string, is a 403
  before anything is read, stored or asked of a model. A request naming no user gets the
  subject's `user_id` filled in (in the JSON body when it is an object, and in the query string),
  so clients may leave it out.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from gligabao.api.app import text_body
from gligabao.errors import Forbidden, Unauthorized

USER_ID = "user_id"


def _jwt_authorizer(event: dict) -> dict | None:
    """What API Gateway's JWT authorizer passed in the event, or None when none ran."""
    context = event.get("requestContext") or {}
    jwt = (context.get("authorizer") or {}).get("jwt") if isinstance(context, dict) else None
    return jwt if isinstance(jwt, dict) else None


def token_subject(event: dict) -> str | None:
    """The subject of the token API Gateway's JWT authorizer validated, or None."""
    claims = (_jwt_authorizer(event) or {}).get("claims") or {}
    subject = claims.get("sub") if isinstance(claims, dict) else None
    return subject if isinstance(subject, str) and subject else None


def authorized(event: dict, auth_mode: str) -> dict:
    """The event to serve. In jwt mode, or whenever a JWT authorizer ran (whatever the mode):
    Unauthorized without a subject, Forbidden when it names another user, else the event with the
    subject's user_id wherever it was left out."""
    if auth_mode != "jwt" and _jwt_authorizer(event) is None:
        return event
    subject = token_subject(event)
    if subject is None:
        raise Unauthorized("unauthorized: the request carries no authenticated user")
    event = text_body(event)  # a base64 body is read as the routes will read it
    body = _json_body(event)
    if any(user != subject for user in _users_named(event, body)):
        raise Forbidden("forbidden: user_id must be the authenticated user's")
    return _with_user_id(event, body, subject)


def _users_named(event: dict, body: Any) -> list[Any]:
    """Every user_id the request names: the query string's (as the routes read it, repeated
    values joined by commas) and the JSON body's."""
    named = []
    query = event.get("queryStringParameters") or {}
    if USER_ID in query:
        named.append(query[USER_ID])
    if isinstance(body, dict) and USER_ID in body:
        named.append(body[USER_ID])
    return named


def _json_body(event: dict) -> Any:
    """The body as the routes parse it (json.loads, the last of duplicated keys), or None when
    it is not JSON (the route answers 400 then)."""
    body = event.get("body")
    if not body or event.get("isBase64Encoded"):
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: thousands of nested arrays (a 400 too)
        return None


def _with_user_id(event: dict, body: Any, subject: str) -> dict:
    event = dict(event)
    query = dict(event.get("queryStringParameters") or {})
    if USER_ID not in query:
        query[USER_ID] = subject
        event["queryStringParameters"] = query
        raw = event.get("rawQueryString") or ""
        event["rawQueryString"] = f"{raw}&{urlencode({USER_ID: subject})}".lstrip("&")
    if isinstance(body, dict) and USER_ID not in body:
        event["body"] = json.dumps({USER_ID: subject, **body})
    return event


__all__ = ["authorized", "token_subject"]
