"""With jwt auth, the body's size is checked before anything reads the body: an oversized request
is a 413 without a JSON parse, whoever it names."""

from __future__ import annotations

import json
from types import SimpleNamespace

from conftest import reconfigure
from remember_helpers import remember_handler

from gligabao.api import handler as entry
from gligabao.local.server import build_event


def test_an_oversized_body_is_a_413_before_the_subject_check_parses_it(monkeypatch):
    reconfigure(auth_mode="jwt")
    parsed = []
    check = entry.authorized
    monkeypatch.setattr(entry, "authorized", lambda event, mode: parsed.append(mode) or check(event, mode))
    body = json.dumps({"user_id": "u1", "text": "x" * (1024 * 1024 + 1)}).encode()
    route = SimpleNamespace(path="/v1/gb/remember", method="ANY")
    event = build_event(
        route, {}, "POST", "/v1/gb/remember", "", {"content-type": "application/json"}, body, "::1"
    )
    event["requestContext"]["authorizer"] = {"jwt": {"claims": {"sub": "u2"}, "scopes": None}}

    result = remember_handler()(event, None)

    assert result["statusCode"] == 413
    assert parsed == []
