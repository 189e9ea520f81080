"""No statement the service sends is larger than 16 KB, whatever the request: RDS Proxy pins a
client's session to its database connection for a statement text over 16 KB, so a long question
or a large text must travel as parameters, never as SQL text."""

from __future__ import annotations

import importlib.util
import json
import random
import string

from conftest import ROOT
from remember_helpers import call_handler, paragraphs, remember_handler
from sql_counting import capturing_statement_texts

from gligabao import bootstrap
from gligabao.limits import DEFAULT_LIMITS

RDS_PROXY_PINNING_BYTES = 16 * 1024


def query_handler():
    spec = importlib.util.spec_from_file_location(
        "gligabao_function_query_size_tests", ROOT / "functions" / "query" / "app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


def longest_question() -> str:
    """`max_query_terms` distinct terms, as long as the query body limit lets them be (random
    letters: as many distinct grams as a term of that length can have)."""
    terms = DEFAULT_LIMITS.max_query_terms
    room = DEFAULT_LIMITS.query_max_body_bytes - len(json.dumps({"user_id": "u1", "query": ""}))
    length = room // terms - 1  # a space between terms
    rng = random.Random(37)
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=length)) for _ in range(terms))


def largest(texts: list[bytes]) -> int:
    return max(len(text) for text in texts)


def test_a_query_of_the_most_and_longest_terms_sends_no_statement_over_16_kb(db, models):
    handler = query_handler()
    assert call_handler(remember_handler(), {"user_id": "u1", "text": "Alice works at Acme."}).status == 200
    question = longest_question()
    body = {"user_id": "u1", "query": question}
    assert len(json.dumps(body).encode()) <= DEFAULT_LIMITS.query_max_body_bytes

    with capturing_statement_texts() as texts:
        reply = call_handler(handler, body, path="/v1/gb/query")

    assert reply.status == 200, reply.json
    assert any(b"gb_keyword_seeds" in text for text in texts)  # the keyword statement was sent
    assert largest(texts) < RDS_PROXY_PINNING_BYTES


def test_remembering_a_large_text_sends_no_statement_over_16_kb(db, models):
    text = paragraphs(60, 5)  # 60 facts, chunked
    assert len(text) > DEFAULT_LIMITS.chunking_threshold_chars * 3
    assert len(text) < DEFAULT_LIMITS.async_remember_threshold_chars

    with capturing_statement_texts() as texts:
        reply = call_handler(remember_handler(), {"user_id": "u1", "text": text})

    assert reply.status == 200, reply.json
    assert len(reply.json["edges"]) >= 50
    assert largest(texts) < RDS_PROXY_PINNING_BYTES
    with bootstrap.bundle().database.transaction("u1") as uow:
        stored = uow.conn.execute(
            "SELECT length(text) AS n FROM gb_artifacts WHERE parent_id IS NULL"
        ).fetchone()
    assert stored["n"] == len(text)  # the text itself travelled as a parameter


def test_a_search_with_every_filter_sends_no_statement_over_16_kb(db, models):
    handler = query_handler()
    assert call_handler(remember_handler(), {"user_id": "u1", "text": "Alice works at Acme."}).status == 200
    filters = {
        "entity_types": ["person"],
        "relations": ["works_at"],
        "session_ids": ["a"],
        "metadata": {"source": "crm"},
        "valid_from": "2020-01-01T00:00:00Z",
        "valid_to": "2030-01-01T00:00:00Z",
        "created_from": "2020-01-01T00:00:00Z",
        "created_to": "2030-01-01T00:00:00Z",
        "include_expired": True,
    }

    for path, body in (
        ("/v1/gb/search", {"user_id": "u1", "query": longest_question()[:40_000], "filters": filters}),
        (
            "/v1/gb/query",
            {"user_id": "u1", "query": "Alice", "filters": filters, "as_of": "2025-01-01T00:00:00Z"},
        ),
    ):
        with capturing_statement_texts() as texts:
            reply = call_handler(handler, body, path=path)
        assert reply.status == 200, reply.json
        assert any(b"gb_edge_passes" in text for text in texts)  # the filtered statement was sent
        assert largest(texts) < RDS_PROXY_PINNING_BYTES
