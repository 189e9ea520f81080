"""Long texts remembered over HTTP (SPEC section 5, step 2): each chunk an artifact with its
summary, extracted once; a failed chunk fails the whole text."""

from __future__ import annotations

import re

import pytest
from conftest import count_rows
from fakes.anthropic_server import Reply
from remember_helpers import paragraphs, stages_called, use_rule_based_model

from gligabao.memory.chunking import split_text


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    return fake_anthropic, fake_openai


def test_a_long_text_is_stored_with_its_chunks_each_extracted_once(api, db, models):
    fake_anthropic, fake_openai = models
    text = paragraphs(12, 10)  # 12 facts, ~8,700 characters

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": text, "session_id": "s1"})

    assert reply.status == 200, reply.json
    body = reply.json
    chunks = db.execute(
        "SELECT id, parent_id, chunk_index, text, summary, session_id, embedding IS NOT NULL, "
        "summary_embedding IS NOT NULL FROM gb_artifacts WHERE kind = 'chunk' "
        "ORDER BY chunk_index"
    ).fetchall()
    assert body["chunk_count"] == len(chunks) == len(split_text(text)) >= 3
    assert [c[1:3] for c in chunks] == [(body["artifact_id"], i) for i in range(len(chunks))]
    assert [c[3] for c in chunks] == split_text(text)
    # the gligabao server's list: each chunk's artifact, place, length and the summary stored
    assert body["chunks"] == [
        {
            "artifact_id": c[0],
            "index": c[2],
            "chars": len(c[3]),
            "summary": {"text": c[4], "model": body["edges"][0]["model_id"], "reasoning": "none"},
        }
        for c in chunks
    ]
    assert (body["embedded_entities"], body["embedded_edges"]) == (len(body["entities"]), 12)
    assert body["remember_run_id"] == body["artifact_id"]
    assert all(
        c[4].startswith("A part of a longer text about") and c[5:] == ("s1", True, True) for c in chunks
    )
    assert db.execute("SELECT text, embedding FROM gb_artifacts WHERE kind = 'text'").fetchone() == (
        text,
        None,
    )
    assert stages_called(fake_anthropic) == ["extract"] * len(chunks)
    assert len(fake_openai.embedding_requests) == 1
    # every fact once, though the overlap shows some to two chunks
    assert sorted(e["source"] for e in body["edges"]) == sorted(f"Person{i}" for i in range(12))
    assert count_rows(db, "gb_edges") == 12
    chunk_ids = {c[0] for c in chunks}
    assert {e["artifact_id"] for e in body["edges"]} <= chunk_ids
    assert {a for (a,) in db.execute("SELECT artifact_id FROM gb_entity_artifacts")} <= chunk_ids


def test_chunk_prompts_say_which_chunk_and_ask_for_its_summary(api, db, models):
    fake_anthropic, _ = models

    api.post("/v1/gb/remember", {"user_id": "u1", "text": paragraphs(12, 10)})

    count = len(fake_anthropic.messages)
    positions = sorted(
        re.search(r"<chunk>(\d+) of (\d+)</chunk>", m["messages"][0]["content"]).groups()
        for m in fake_anthropic.messages
    )
    assert positions == sorted((str(i + 1), str(count)) for i in range(count))
    system = fake_anthropic.messages[0]["system"]
    system = system if isinstance(system, str) else system[0]["text"]
    assert '"summary"' in system


def test_a_failed_chunk_fails_the_whole_text_and_stores_nothing(api, db, fake_anthropic, fake_openai):
    calls = []

    def one_chunk_fails(body):
        calls.append(body)
        if "<chunk>2 of" in body["messages"][0]["content"]:
            return Reply(text="", stop_reason="max_tokens")
        from remember_helpers import extraction_reply

        return extraction_reply(body)

    fake_anthropic.responder = one_chunk_fails

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "text": paragraphs(12, 10)})

    assert reply.status == 502
    assert count_rows(db, "gb_artifacts") == 0 and count_rows(db, "gb_entities") == 0
    assert fake_openai.requests == []
    assert db.execute(
        "SELECT count(*) FILTER (WHERE ok), count(*) FILTER (WHERE NOT ok) FROM gb_inferences"
    ).fetchone() == (len(calls) - 1, 1)
