"""The contract of remember and query at their edges: unknown fields refused, exactly one monitoring
event per call whatever its outcome, and a missing dataset refused before anything is paid for."""

from __future__ import annotations

import json

import pytest
from conftest import count_rows, reconfigure
from graph_rows import alice_works_at_acme


def events_of(output: str) -> list[dict]:
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    return [line for line in lines if str(line.get("message", "")).split(".")[-1] in ("ok", "error")]


def emf_documents(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{") and '"_aws"' in line]


def test_query_refuses_an_unknown_field_naming_it(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)

    reply = api.post(
        "/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?", "sesion_id": "chat-42"}
    )

    assert reply.status == 400
    assert reply.json == {"error": "sesion_id: unknown field"}
    assert fake_openai.requests == [] and fake_anthropic.requests == []


def test_a_query_of_a_missing_dataset_is_404_before_any_embeddings_request(
    api, db, fake_anthropic, fake_openai
):
    alice_works_at_acme(db)

    reply = api.post(
        "/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?", "dataset": "missing"}
    )

    assert reply.status == 404
    assert reply.json == {"error": "dataset 'missing' not found"}
    assert fake_openai.requests == [] and fake_anthropic.requests == []
    assert count_rows(db, "gb_inferences") == 0


def test_another_users_dataset_is_a_missing_dataset(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db, user_id="u2")

    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where does Alice work?"})

    assert reply.status == 404
    assert fake_openai.requests == []


BAD_CALLS = [
    ("remember", {"user_id": "u1"}, 400),
    ("remember", {"user_id": "u1", "text": "Alice works at Acme.", "unknown": 1}, 400),
    ("remember", {"user_id": "u1", "text": "x" * (1024 * 1024 + 1)}, 413),
    ("query", {"user_id": "u1"}, 400),
    ("query", {"user_id": "u1", "query": "q" * (64 * 1024)}, 413),
    ("query", {"user_id": "u1", "query": "Where?", "dataset": "missing"}, 404),
]


@pytest.mark.parametrize(
    ("operation", "body", "status"), BAD_CALLS, ids=[f"{o}-{s}" for o, _, s in BAD_CALLS]
)
def test_every_call_ends_with_exactly_one_event_even_when_refused(
    api, db, fake_anthropic, fake_openai, capsys, operation, body, status
):
    capsys.readouterr()

    reply = api.post(f"/v1/gb/{operation}", body)

    assert reply.status == status
    output = capsys.readouterr().out
    [event] = events_of(output)
    assert (event["event"], event["status"], event["error"]) == (
        f"{operation}.error",
        status,
        reply.json["error"],
    )
    assert [doc["Errors"] for doc in emf_documents(output)] == [[1.0]]


@pytest.mark.parametrize("operation", ["remember", "query"])
def test_a_missing_provider_key_is_503_with_its_one_event(api, db, capsys, operation):
    reconfigure(anthropic_api_key=None, openai_api_key=None)
    alice_works_at_acme(db)
    capsys.readouterr()

    body = (
        {"user_id": "u1", "text": "Alice works at Acme."}
        if operation == "remember"
        else {"user_id": "u1", "query": "Acme?"}
    )
    reply = api.post(f"/v1/gb/{operation}", body)

    assert reply.status == 503
    [event] = events_of(capsys.readouterr().out)
    assert (event["event"], event["status"], event["user_id"]) == (f"{operation}.error", 503, "u1")


def test_the_routes_that_are_not_remember_or_query_emit_no_event(api, db, capsys):
    capsys.readouterr()

    assert api.get("/v1/gb/datasets?user_id=u1").status == 200
    assert api.get("/v1/gb/health").status == 200

    assert events_of(capsys.readouterr().out) == []
