"""remember in-process (SPEC section 11): a remembered text ends with a remember.ok event with
its counts, tokens and cost, and never its text."""

from __future__ import annotations

import json

import pytest
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
    calls = db.execute(
        "SELECT stage, model, input_tokens, output_tokens, cost_usd FROM gb_inferences WHERE session_id = 's1' "
        "ORDER BY id"
    ).fetchall()
    assert [(stage, model) for stage, model, *_ in calls] == [
        ("extract", "claude-haiku-5-5"),
        ("embed", "text-embedding-3-small"),
    ]
    (_, _, extract_in, extract_out, extract_cost), (_, _, embed_in, embed_out, embed_cost) = calls
    # the price table's, in USD per million tokens: claude-haiku-5-5 0.10 in and 0.50 out,
    # text-embedding-3-small 0.02
    assert float(extract_cost) == pytest.approx((extract_in * 0.10 + extract_out * 0.50) / 1e6)
    assert (embed_out, float(embed_cost)) == (0, pytest.approx(embed_in * 0.02 / 1e6))
    assert (event["input_tokens"], event["output_tokens"]) == (extract_in + embed_in, extract_out)
    assert extract_in > 0 and extract_out > 0 and embed_in > 0
    assert event["cost_usd"] == pytest.approx(float(extract_cost) + float(embed_cost))
    assert "Alice works at Acme" not in "\n".join(json.dumps(line) for line in lines)
