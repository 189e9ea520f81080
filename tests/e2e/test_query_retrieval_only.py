"""POST /v1/gb/query with "answer": false: the retrieved context, exactly what the query prompt would
hold, for one embeddings request and no LLM call."""

from __future__ import annotations

from query_helpers import Graph, alice_works_at_acme, ask, prompt_sent, reply_citing


def llm_calls(fake_anthropic) -> int:
    return len(fake_anthropic.messages)


def test_answer_false_returns_the_context_in_the_evidence_format_with_one_embeddings_request_and_no_llm_call(
    api, db, fake_anthropic, fake_openai
):
    _graph, ids = alice_works_at_acme(db)

    reply = ask(api, answer=False, session_id="chat-42")

    assert reply.status == 200, reply.json
    body = reply.json
    assert "answer" not in body and "evidence" not in body
    assert body["session_id"] == "chat-42"
    assert body["entities"] == [
        {"id": ids["alice"], "name": "Alice", "type": "person", "description": "engineer"},
        {"id": ids["acme"], "name": "Acme", "type": "organization"},
    ]
    assert body["edges"] == [
        {
            "id": ids["works_at"],
            "source_id": ids["alice"],
            "target_id": ids["acme"],
            "source": "Alice",
            "target": "Acme",
            "relation": "works_at",
            "description": "Alice works at Acme.",
            "artifact_id": ids["artifact"],
            "valid_at": "2025-01-31T09:00:00Z",
            "created_at": "2025-01-31T09:00:05Z",
        }
    ]
    assert body["passages"] == []
    assert body["context"].startswith("<graph>\n[entity 1] Alice (person): engineer\n")
    assert "<question>" not in body["context"] and body["context"].endswith("</current_time>")
    assert llm_calls(fake_anthropic) == 0
    assert len(fake_openai.embedding_requests) == 1


def test_the_context_text_is_the_prompt_an_answer_sends_without_its_question(
    api, db, fake_anthropic, fake_openai
):
    graph = Graph(db)
    text = graph.text("a long text about Alice")
    graph.chunk(text, 0, "Alice joined Acme in 2023.", "Alice joined Acme.")
    alice = graph.entity("Alice", "person", "engineer")
    acme = graph.entity("Acme", "organization")
    graph.edge(alice, acme, "works_at", "Alice works at Acme.")
    question = "When did Alice join Acme?"
    fake_openai.override(question, fake_openai.vector("Alice joined Acme in 2023."))
    fake_anthropic.queue(reply_citing("In 2023."))

    assert ask(api, question).status == 200
    context = ask(api, question, answer=False).json

    sent = prompt_sent(fake_anthropic)
    assert context["context"] + f"\n<question>\n{question}\n</question>" == _without_time(sent, context)
    assert "<passages>" in context["context"]
    assert [p["artifact_id"] for p in context["passages"]] == [text + 1]
    assert context["passages"][0]["text"] == "Alice joined Acme in 2023."
    assert llm_calls(fake_anthropic) == 1  # the answer's; none for the context


def _without_time(sent: str, context: dict) -> str:
    """The prompt sent, with the context's current time (the two calls ran a moment apart)."""
    mine = context["context"].split("<current_time>")[1].split("</current_time>")[0]
    theirs = sent.split("<current_time>")[1].split("</current_time>")[0]
    return sent.replace(theirs, mine)


def test_an_empty_context_is_an_empty_answer_without_the_fixed_answer(api, db, fake_anthropic, fake_openai):
    Graph(db)

    body = ask(api, "Where does Zed live?", answer=False).json

    assert (body["entities"], body["edges"], body["passages"]) == ([], [], [])
    assert body["context"].startswith("<graph>\n</graph>\n<current_time>")
    assert llm_calls(fake_anthropic) == 0


def test_retrieval_only_needs_no_llm_key(api, db, fake_openai):
    alice_works_at_acme(db)

    assert ask(api).status == 503  # the answer needs the LLM
    reply = ask(api, answer=False)

    assert reply.status == 200
    assert [e["name"] for e in reply.json["entities"]] == ["Alice", "Acme"]


def test_as_of_is_said_in_the_context_text(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)

    body = ask(api, answer=False, as_of="2025-06-01T00:00:00Z").json

    assert "<as_of>2025-06-01T00:00:00Z</as_of>" in body["context"]
    assert [e["relation"] for e in body["edges"]] == ["works_at"]


def test_answer_must_be_a_boolean_and_answer_false_refuses_a_nearby_search(
    api, db, fake_anthropic, fake_openai
):
    alice_works_at_acme(db)

    not_boolean = ask(api, answer="false")
    nearby = ask(api, answer=False, geo_nearby=True)
    evaluated = ask(api, answer=False, eval=True)

    assert not_boolean.status == 400 and "answer" in not_boolean.json["error"]
    assert nearby.status == 400 and "detect_geo" in nearby.json["error"]
    assert evaluated.status == 400 and "eval" in evaluated.json["error"]
    assert llm_calls(fake_anthropic) == 0 and fake_openai.embedding_requests == []


def test_unknown_dataset_is_still_a_404(api, db, fake_anthropic, fake_openai):
    reply = ask(api, answer=False, dataset="nowhere")

    assert reply.status == 404
    assert fake_openai.embedding_requests == []
