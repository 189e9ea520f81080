"""remember in-process (SPEC section 11): a remembered text ends with a remember.ok event with
its counts, tokens and cost, and never its text."""

from __future__ import annotations

import json

from remember_helpers import call_handler, remember_handler


def test_remember_ends_with_a_remember_ok_event_with_counts_tokens_and_cost(db, models, capsys):
    handler = remember_handler()
    capsys.readouterr()

    reply = call_handler(handler, {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "s1"})

    assert reply.status == 200
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    [event] = [line for line in lines if line.get("message") == "remember.ok"]
    assert event["counts"] == {"entities_created": 2, "edges_created": 1, "edges_superseded": 0}
    assert event["session_id"] == "s1" and event["dataset"] == "main" and event["status"] == 200
    assert event["input_tokens"] > 0 and event["output_tokens"] > 0 and event["cost_usd"] > 0
    assert "Alice works at Acme" not in "\n".join(json.dumps(line) for line in lines)
