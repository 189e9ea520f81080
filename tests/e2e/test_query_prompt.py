"""The prompt of the query stage (seeds/query.md, step 3) as sent over HTTP, and replies with code
fences or prose around their JSON."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from query_helpers import Graph, alice_works_at_acme, ask, prompt_sent, reply_citing

from gligabao.limits import DEFAULT_LIMITS


def test_the_graph_then_the_current_time_and_the_question_are_sent_without_passages_when_there_are_none(
    api, db, fake_anthropic, fake_openai
):
    alice_works_at_acme(db)
    fake_anthropic.queue(reply_citing())

    assert ask(api).status == 200

    prompt = prompt_sent(fake_anthropic)
    graph, rest = prompt.split("</graph>\n")
    assert graph.splitlines() == [
        "<graph>",
        "[entity 1] Alice (person): engineer",
        "[entity 2] Acme (organization)",
        "[edge 1] Alice(1) --works_at--> Acme(2): Alice works at Acme. [valid_at=2025-01-31T09:00:00Z]",
    ]
    assert "<passages>" not in prompt
    current_time, question = rest.split("\n", 1)
    sent = datetime.fromisoformat(current_time.removeprefix("<current_time>").removesuffix("</current_time>"))
    assert abs((datetime.now(UTC) - sent).total_seconds()) < 60
    assert question == "<question>\nWhere does Alice work?\n</question>"


def test_passages_are_sent_inside_passages_tags_after_the_graph(api, db, fake_anthropic, fake_openai):
    graph = Graph(db)
    text = graph.text("a long text about Alice")
    chunk = graph.chunk(text, 0, "Alice joined Acme in 2023.", "Alice joined Acme.")
    fake_openai.override("When did Alice join Acme?", fake_openai.vector("Alice joined Acme in 2023."))
    fake_anthropic.queue(reply_citing("In 2023.", passages=[chunk]))

    assert ask(api, "When did Alice join Acme?").status == 200

    prompt = prompt_sent(fake_anthropic)
    assert prompt.startswith("<graph>\n</graph>\n<passages>\n")
    # found by its text and by its summary (cosine 0.77 with the question): given with both
    assert (
        f"<passages>\n[passage {chunk}] chunk 0 of text {text}\nsummary: Alice joined Acme.\n"
        "text: Alice joined Acme in 2023.\n</passages>\n<current_time>"
    ) in prompt


def test_the_system_prompt_answers_only_from_the_context_and_treats_invalid_at_as_no_longer_true(
    api, db, fake_anthropic, fake_openai
):
    alice_works_at_acme(db)
    fake_anthropic.queue(reply_citing())

    ask(api)

    request = fake_anthropic.messages[-1]
    system = request["system"] if isinstance(request["system"], str) else request["system"][0]["text"]
    assert "only the context" in system
    assert "invalid_at stopped being true" in system and "no longer true" in system
    assert '{"answer": "Alice works at Acme.", "entities": [1, 2], "edges": [1], "passages": [14]}' in system
    assert request["max_tokens"] == DEFAULT_LIMITS.query_max_output_tokens == 2048
    assert request["messages"][0]["role"] == "user"


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"answer": "Alice works at Acme.", "entities": [1], "edges": [1], "passages": []}\n```',
        'Here is the answer:\n{"answer": "Alice works at Acme.", "entities": [1], "edges": [1]}\nHope it helps.',
    ],
)
def test_code_fences_or_prose_around_the_reply_json_are_tolerated(api, db, fake_anthropic, fake_openai, text):
    alice_works_at_acme(db)
    fake_anthropic.queue(text)

    reply = ask(api)

    assert reply.status == 200
    assert reply.json["answer"] == "Alice works at Acme."
    assert [e["id"] for e in reply.json["evidence"]["edges"]] == [1]
