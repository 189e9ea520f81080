"""What a query and a remember read and write, they do in a transaction naming their dataset
(migration 0047): row-level security then shows that dataset's rows only, and its policies read
one row of gb_datasets, however many datasets the user has."""

from __future__ import annotations

import pytest
from remember_helpers import rule_based_model

from gligabao.memory import query, remember


@pytest.fixture
def named(monkeypatch) -> list[tuple[str, str]]:
    """(stage, the dataset its transaction names) for the query's retrieval and the remember's writes."""
    seen: list[tuple[str, str]] = []

    def recording(stage: str, function, uow_of):
        def wrapper(*args, **kwargs):
            conn = uow_of(args).conn
            seen.append(
                (stage, conn.execute("SELECT current_setting('gligabao.dataset', true) AS d").fetchone()["d"])
            )
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(query, "retrieve", recording("retrieval", query.retrieve, lambda args: args[0]))
    monkeypatch.setattr(
        remember, "write_graph", recording("store", remember.write_graph, lambda args: args[1])
    )
    return seen


def test_a_remember_and_queries_run_in_transactions_naming_their_dataset(
    api, named, fake_anthropic, fake_openai
):
    fake_anthropic.responder = rule_based_model
    assert (
        api.post(
            "/v1/gb/remember", {"user_id": "u1", "dataset": "notes", "text": "Alice works at Acme."}
        ).status
        == 200
    )
    api.post("/v1/gb/remember", {"user_id": "u1", "dataset": "other", "text": "Bob works at Initech."})
    for _ in range(2):  # the second on a dataset this container knows: its id is not looked up again
        reply = api.post(
            "/v1/gb/query", {"user_id": "u1", "dataset": "notes", "query": "Where does Alice work?"}
        )
        assert reply.status == 200
        assert "Initech" not in str(reply.json["evidence"])
    reply = api.post(
        "/v1/gb/query",
        {"user_id": "u1", "dataset": "notes", "query": "Where does Alice work?", "answer": False},
    )
    assert reply.status == 200

    assert named == [
        ("store", "notes"),
        ("store", "other"),
        ("retrieval", "notes"),
        ("retrieval", "notes"),
        ("retrieval", "notes"),
    ]
