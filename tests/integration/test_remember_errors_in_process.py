"""remember's errors, in-process (SPEC section 5): a failure inside the store rolls everything
back, and every error ends with a remember.error event."""

from __future__ import annotations

import pytest
from fakes.anthropic_server import Reply
from graph_rows import nothing_stored

VALID = {"user_id": "u1", "text": "Alice works at Acme."}


def test_a_failure_inside_the_store_rolls_everything_back(db, models, monkeypatch):
    from gligabao import bootstrap
    from gligabao.db import graph_writes
    from gligabao.errors import GbError
    from gligabao.memory.remember import TextToRemember, remember_text

    def failing_link(*args, **kwargs):
        raise GbError("the database went away")

    monkeypatch.setattr(graph_writes, "link", failing_link)

    with pytest.raises(GbError):
        remember_text(
            bootstrap.bundle(),
            TextToRemember(user_id="u1", dataset="main", text="Alice works at Acme.", session_id="s1"),
        )

    assert nothing_stored(db)
    assert db.execute("SELECT stage, ok, dataset_id FROM gb_inferences ORDER BY id").fetchall() == [
        ("extract", True, None),
        ("embed", True, None),
    ]


def test_an_error_ends_with_a_remember_error_event(db, fake_anthropic, fake_openai, capsys):
    import json

    from remember_helpers import call_handler, remember_handler

    handler = remember_handler()
    fake_anthropic.queue(Reply.error(500), times=3)
    capsys.readouterr()

    reply = call_handler(handler, VALID)

    assert reply.status == 502
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    [event] = [line for line in lines if line.get("message") == "remember.error"]
    assert event["status"] == 502 and "extract" in event["error"]
    assert [doc["Errors"] for doc in lines if "_aws" in doc] == [[1.0]]
