"""The answer of query: no context, inferences, the monitoring event, nothing else written, and
facts over time (seeds/query.md, steps 2-4 and "Facts over time and history")."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from conftest import GB_TABLES, count_rows
from query_helpers import T0, Graph, alice_works_at_acme, ask, prompt_sent, reply_citing

from gligabao.memory.query import NO_CONTEXT_ANSWER


def events(stdout: str) -> list[dict]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event", "").startswith("query.")]


def test_no_context_gives_the_fixed_answer_with_empty_evidence_and_no_llm_call(
    api, db, fake_anthropic, fake_openai
):
    Graph(db)  # an empty dataset: no entity, no fact, no passage

    reply = ask(api, session_id="a")

    assert reply.status == 200
    assert reply.json == {
        "session_id": "a",
        "answer": "I don't have any information in memory to answer that.",
        "evidence": {"entities": [], "edges": [], "passages": []},
    }
    assert reply.json["answer"] == NO_CONTEXT_ANSWER
    assert fake_anthropic.messages == []
    assert db.execute("SELECT stage, type FROM gb_inferences").fetchall() == [("embed", "query")]


def test_a_vague_question_is_answered_from_the_most_recent_entities(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)
    fake_anthropic.queue(reply_citing("I know that Alice works at Acme.", edges=[1]))

    reply = ask(api, "What do you know?")

    assert reply.status == 200
    assert "[edge 1] Alice(1) --works_at--> Acme(2)" in prompt_sent(fake_anthropic)


def test_the_embed_and_query_stages_are_recorded_as_inferences_of_type_query(
    api, db, fake_anthropic, fake_openai
):
    graph, _ = alice_works_at_acme(db)
    fake_anthropic.queue(reply_citing(edges=[1]))

    assert ask(api, session_id="chat-42").status == 200

    rows = db.execute(
        """SELECT user_id, dataset_id, type, stage, model, reasoning, input_tokens, output_tokens, ok,
                  session_id, request_id IS NOT NULL
           FROM gb_inferences ORDER BY id"""
    ).fetchall()
    assert [row[3] for row in rows] == ["embed", "query"]
    embed, answer = rows
    assert embed[:3] == answer[:3] == ("u1", graph.dataset_id, "query")
    assert embed[4:6] == ("text-embedding-3-small", None)
    assert answer[4:6] == ("claude-haiku-5-5", "none")
    assert all(row[6] and row[8] and row[9] == "chat-42" and row[10] for row in rows)
    assert answer[7] > 0


def test_each_query_ends_with_one_monitoring_event(api, db, fake_anthropic, fake_openai, capsys):
    alice_works_at_acme(db)
    fake_anthropic.queue(reply_citing(edges=[1]))
    capsys.readouterr()

    ask(api, session_id="chat-42")
    ask(api, dataset="missing")

    ok, error = events(capsys.readouterr().out)
    assert (ok["event"], ok["status"], ok["session_id"], ok["dataset"]) == (
        "query.ok",
        200,
        "chat-42",
        "main",
    )
    assert ok["counts"]["evidence_edges"] == 1 and ok["input_tokens"] > 0
    assert (error["event"], error["status"], error["error"]) == (
        "query.error",
        404,
        "dataset 'missing' not found",
    )


def test_a_query_writes_nothing_but_its_inferences(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)
    tables = [name.strip() for name in GB_TABLES.split(",") if name.strip() != "gb_inferences"]
    before = {table: count_rows(db, table) for table in tables}
    updated = db.execute("SELECT max(updated_at) FROM gb_entities").fetchone()
    fake_anthropic.queue(reply_citing(edges=[1]))

    assert ask(api).status == 200

    assert {table: count_rows(db, table) for table in tables} == before
    assert db.execute("SELECT max(updated_at) FROM gb_entities").fetchone() == updated
    assert count_rows(db, "gb_inferences") == 2


# --- facts over time -----------------------------------------------------------------------------


def test_live_ended_and_superseded_facts_as_the_llm_sees_them(api, db, fake_anthropic, fake_openai):
    graph = Graph(db)
    alice = graph.entity("Alice", "person", "engineer")
    acme, globex = graph.entity("Acme", "organization"), graph.entity("Globex", "organization")
    paris = graph.entity("Paris", "place")
    moved = datetime(2024, 3, 1, tzinfo=UTC)
    superseded = graph.edge(
        alice,
        acme,
        "works_at",
        "Alice works at Acme.",
        valid_at=datetime(2023, 1, 1, tzinfo=UTC),
        invalid_at=moved,
        expired_at=T0,
    )
    live = graph.edge(alice, globex, "works_at", "Alice works at Globex.", valid_at=moved)
    ended = graph.edge(
        alice,
        paris,
        "lives_in",
        "Alice lived in Paris.",
        valid_at=datetime(2020, 1, 1, tzinfo=UTC),
        invalid_at=datetime(2022, 6, 1, tzinfo=UTC),
    )
    fake_anthropic.queue(reply_citing("Alice works at Globex.", edges=[live, superseded]))

    reply = ask(api, "Where does Alice work now?")

    prompt = prompt_sent(fake_anthropic)
    assert (
        f"[edge {live}] Alice({alice}) --works_at--> Globex({globex}): Alice works at Globex. "
        "[valid_at=2024-03-01T00:00:00Z]"
    ) in prompt
    assert (
        f"[edge {ended}] Alice({alice}) --lives_in--> Paris({paris}): Alice lived in Paris. "
        "[valid_at=2020-01-01T00:00:00Z, invalid_at=2022-06-01T00:00:00Z]"
    ) in prompt
    assert f"[edge {superseded}]" not in prompt
    # The superseded edge was not sent: citing it is a hallucination, dropped.
    assert [e["id"] for e in reply.json["evidence"]["edges"]] == [live]
    assert "expired_at" not in reply.json["evidence"]["edges"][0]
