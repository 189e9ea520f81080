"""remember under provider faults, through the remember handler the Lambda runs: every fault of
the extraction or the embeddings ends in a 200 (after retries) or a clear 502, never a 500; the
call's inference rows are written; and a failed remember stores nothing, however far it went.

Each test starts from a dataset already holding a remembered text, so "nothing half-stored" is
the graph's row counts unchanged, and a success adds exactly the new text."""

from __future__ import annotations

import json

import pytest
from conftest import count_rows
from fakes.fake_http import Fault
from remember_helpers import call_handler, remember_handler, use_rule_based_model

TABLES = ("gb_artifacts", "gb_entities", "gb_edges")
TEXT = {"user_id": "u1", "text": "Bob works at Initech.", "session_id": "s"}


@pytest.fixture(scope="module")
def handler():
    return remember_handler()


@pytest.fixture
def known(db, fake_anthropic, fake_openai, handler):
    """A dataset holding Alice works at Acme; the providers ready for the next remember."""
    use_rule_based_model(fake_anthropic)
    assert call_handler(handler, {"user_id": "u1", "text": "Alice works at Acme."}).status == 200
    fake_anthropic.requests.clear()
    fake_openai.requests.clear()
    return fake_anthropic, fake_openai


def counts(db) -> tuple[int, ...]:
    return tuple(count_rows(db, table) for table in TABLES)


def calls(db) -> list[tuple]:
    return db.execute("SELECT stage, ok FROM gb_inferences WHERE session_id = 's' ORDER BY id").fetchall()


def message(**fields) -> bytes:
    reply = {
        "type": "message",
        "content": [{"type": "text", "text": '{"entities": [], "edges": []}'}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return json.dumps({**reply, **fields}).encode()


SUCCESS_AFTER_RETRY = [
    Fault.error(429, retry_after_ms="200"),
    Fault.error(500),
    Fault.error(502),
    Fault.error(503),
    Fault.error(529),
    Fault.reset(),
    Fault.cut(at=25, reset=True),
    Fault.cut(at=25),
]
SUCCESS_IDS = ["429", "500", "502", "503", "529", "reset", "reset-mid-reply", "cut-body"]


@pytest.mark.parametrize("fault", SUCCESS_AFTER_RETRY, ids=SUCCESS_IDS)
@pytest.mark.parametrize("stage", ["extract", "embed"])
def test_a_fault_that_passes_is_retried_and_the_text_is_remembered(db, known, handler, stage, fault):
    fake_anthropic, fake_openai = known
    (fake_anthropic if stage == "extract" else fake_openai).inject(fault)
    before = counts(db)

    reply = call_handler(handler, TEXT)

    assert reply.status == 200, reply.json
    assert [e["name"] for e in reply.json["entities"]] == ["Bob", "Initech"]
    assert counts(db) == (before[0] + 1, before[1] + 2, before[2] + 1)
    assert calls(db) == [("extract", True), ("embed", True)]  # one row per call, retries included


def vectors(embedding: str) -> Fault:
    return Fault.body(
        f'{{"data": [{{"index": 0, "embedding": {embedding}}}], "usage": {{"prompt_tokens": 1}}}}'
    )


# (stage, name, the faults of its attempts, what the 502 says)
FAILURES = [
    (
        "extract",
        "always-503",
        [Fault.error(503)] * 3,
        "extract failed: HTTP 503 api_error (request req_fake) after 3 attempts",
    ),
    ("extract", "always-reset", [Fault.reset()] * 3, "extract failed: the connection broke"),
    (
        "extract",
        "retry-after-60s",
        [Fault.error(429, retry_after="60")],
        "asked to retry after 60 s, no time left to retry",
    ),
    ("extract", "400", [Fault.error(400)], "extract failed: HTTP 400 invalid_request_error"),
    ("extract", "truncated-body", [Fault.body(message()[:40])], "was not a Messages API reply: not JSON"),
    ("extract", "html", [Fault.body("<html>oops</html>")], "was not a Messages API reply: not JSON"),
    (
        "extract",
        "wrong-shape",
        [Fault.body(b'{"id": "msg_1"}')],
        "was not a Messages API reply: content: Field required",
    ),
    ("extract", "empty-content", [Fault.body(message(content=[]))], "LLM reply of stage extract was empty"),
    (
        "extract",
        "refusal",
        [Fault.body(message(stop_reason="refusal"))],
        "LLM refused to answer stage extract",
    ),
    ("extract", "max-tokens", [Fault.body(message(stop_reason="max_tokens"))], "was truncated (max_tokens)"),
    (
        "extract",
        "wrong-reply-schema",
        [Fault.body(message(content=[{"type": "text", "text": '{"entities": "Bob"}'}]))],
        "did not fit its schema: entities",
    ),
    (
        "embed",
        "always-500",
        [Fault.error(500)] * 3,
        "embeddings call failed: HTTP 500 server_error (request req_fake) after 3 attempts",
    ),
    (
        "embed",
        "always-reset-mid-reply",
        [Fault.cut(at=10, reset=True)] * 3,
        "embeddings call failed: the connection broke",
    ),
    ("embed", "truncated-body", [Fault.body(b'{"data": [')], "was not an Embeddings API reply: not JSON"),
    (
        "embed",
        "wrong-shape",
        [Fault.body(b'{"data": "none", "usage": {}}')],
        "was not an Embeddings API reply: data",
    ),
    ("embed", "strings", [vectors('["a", "b"]')], "data.0.embedding"),
    ("embed", "null", [vectors("null")], "data.0.embedding"),
    ("embed", "wrong-count", [vectors("[0.5]")], "embeddings reply held 1 vectors for"),
]


@pytest.mark.parametrize(
    ("stage", "faults", "error"),
    [(stage, faults, error) for stage, _, faults, error in FAILURES],
    ids=[f"{stage}-{name}" for stage, name, _, _ in FAILURES],
)
def test_a_fault_that_does_not_pass_is_a_502_storing_only_the_inference_rows(
    db, known, handler, capsys, stage, faults, error
):
    fake_anthropic, fake_openai = known
    (fake_anthropic if stage == "extract" else fake_openai).inject(*faults)
    before = counts(db)
    capsys.readouterr()

    reply = call_handler(handler, TEXT)

    assert reply.status == 502, reply.json
    assert error in reply.json["error"]
    assert counts(db) == before
    expected = [("extract", False)] if stage == "extract" else [("extract", True), ("embed", False)]
    assert calls(db) == expected
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [(e["event"], e["status"]) for e in events if e.get("message") == "remember.error"] == [
        ("remember.error", 502)
    ]


def test_a_broken_resolve_reply_leaves_the_graph_as_it_was(db, known, handler):
    fake_anthropic, _ = known
    before = counts(db)
    fake_anthropic.inject(Fault(), Fault.body(message(content=[{"type": "text", "text": '{"facts": 7}'}])))

    reply = call_handler(handler, {"user_id": "u1", "text": "Alice is employed by Acme.", "session_id": "s"})

    assert reply.status == 502 and "resolve" in reply.json["error"]
    assert counts(db) == before
    assert calls(db) == [("extract", True), ("embed", True), ("resolve", False)]


# --- an extraction with absurd names and times: stored by the documented rules ------------------


def extraction(source="Bob", target="Initech", **edge) -> dict:
    return {
        "entities": [{"name": source, "type": "person"}, {"name": target, "type": "organization"}],
        "edges": [
            {"source": source, "target": target, "relation": "works_at", "description": "Works.", **edge}
        ],
    }


def remembered(db, known, handler, reply: dict):
    fake_anthropic, _ = known
    fake_anthropic.queue(reply)  # the extraction; a resolve call would get the rule-based model
    before = counts(db)
    result = call_handler(handler, {**TEXT, "reference_time": "2025-01-31T09:00:00Z"})
    assert result.status == 200, result.json
    return result.json, before


def test_a_10_kb_name_is_cut_to_200_characters(db, known, handler):
    body, before = remembered(db, known, handler, extraction(source="Bob " + "b" * 10_000))

    names = [e["name"] for e in body["entities"]]
    assert names == ["Bob " + "b" * 196, "Initech"]
    assert counts(db) == (before[0] + 1, before[1] + 2, before[2] + 1)
    assert db.execute(
        "SELECT max(length(name)), max(length(normalized_name)) FROM gb_entities"
    ).fetchone() == (
        200,
        200,
    )


def test_a_10_kb_name_that_does_not_compress_is_stored_too(db, known, handler):
    # Random text defeats PostgreSQL's compression: uncut, it would not fit the index of names.
    import random

    noise = "".join(random.Random(7).choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(10_000))
    body, _ = remembered(db, known, handler, extraction(source=noise))

    assert body["entities"][0]["name"] == noise[:200]


def test_control_characters_in_names_are_removed(db, known, handler):
    body, _ = remembered(db, known, handler, extraction(source="B\x1b[31mob\x07", target="Ini\x00tech\x7f"))

    assert [e["name"] for e in body["entities"]] == ["B[31mob", "Initech"]
    assert body["edges"][0]["source"] == "B[31mob"


@pytest.mark.parametrize("name", ["", "   ", "\x00\x01"])
def test_a_name_with_nothing_printable_drops_the_entity_and_its_facts(db, known, handler, name):
    body, before = remembered(db, known, handler, extraction(source=name))

    assert [e["name"] for e in body["entities"]] == ["Initech"]
    assert body["edges"] == []
    assert counts(db) == (before[0] + 1, before[1] + 1, before[2])


@pytest.mark.parametrize(
    "when",
    [
        "0000-01-01T00:00:00Z",
        "99999-01-01T00:00:00Z",
        "not a date",
        "0001-01-01T00:00:00+05:00",
        "9999-12-31T23:00:00-05:00",
    ],
    ids=["year-0", "year-99999", "not-a-date", "before-year-1-in-utc", "after-year-9999-in-utc"],
)
def test_a_time_that_is_no_time_is_dropped_and_the_fact_kept(db, known, handler, when):
    body, _ = remembered(db, known, handler, extraction(valid_at=when, invalid_at=when))

    [edge] = body["edges"]
    assert edge["valid_at"] == "2025-01-31T09:00:00Z"  # the reference time, as for a fact with no time
    assert edge.get("invalid_at") is None


def test_extreme_but_real_times_are_kept(db, known, handler):
    body, _ = remembered(
        db, known, handler, extraction(valid_at="0001-01-01T00:00:00Z", invalid_at="9999-12-31T23:59:59Z")
    )

    [edge] = body["edges"]
    assert (edge["valid_at"], edge["invalid_at"]) == ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z")


def test_a_time_that_is_not_a_string_is_a_502(db, known, handler):
    fake_anthropic, _ = known
    fake_anthropic.queue(extraction(valid_at=20240101))
    before = counts(db)

    reply = call_handler(handler, TEXT)

    assert reply.status == 502
    assert reply.json["error"] == (
        "LLM reply of stage extract did not fit its schema: edges.0.valid_at: Input should be a valid string"
    )
    assert counts(db) == before
