"""The evidence of an answer (seeds/query.md, step 4): the cited ids validated against what was sent."""

from __future__ import annotations

from datetime import UTC, datetime

from query_helpers import T0, Graph, alice_works_at_acme, ask, fake_vector, reply_citing, vector_literal


def evidence_for(api, fake_anthropic, reply: dict, query: str = "Where does Alice work?") -> dict:
    fake_anthropic.queue(reply)
    response = ask(api, query)
    assert response.status == 200, response.json
    return response.json["evidence"]


def test_the_seed_example_alice_works_at_acme(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)

    fake_anthropic.queue(reply_citing(entities=[1, 2], edges=[1]))

    response = ask(api, session_id="chat-42")

    assert response.json == {
        "session_id": "chat-42",
        "answer": "Alice works at Acme.",
        "evidence": {
            "entities": [
                {"id": 1, "name": "Alice", "type": "person", "description": "engineer"},
                {"id": 2, "name": "Acme", "type": "organization"},
            ],
            "edges": [
                {
                    "id": 1,
                    "source_id": 1,
                    "target_id": 2,
                    "source": "Alice",
                    "target": "Acme",
                    "relation": "works_at",
                    "description": "Alice works at Acme.",
                    "artifact_id": 1,
                    "valid_at": "2025-01-31T09:00:00Z",
                    "created_at": "2025-01-31T09:00:05Z",
                },
            ],
            "passages": [],
        },
    }


def test_ids_that_were_not_in_the_context_are_dropped(api, db, fake_anthropic, fake_openai):
    _graph, ids = alice_works_at_acme(db)
    elsewhere = Graph(db, "u2")
    bob = elsewhere.entity("Bob")
    theirs = elsewhere.edge(bob, elsewhere.entity("Globex", "organization"), "works_at")

    evidence = evidence_for(
        api, fake_anthropic, reply_citing(entities=[1, 99, bob], edges=[1, 42, theirs], passages=[7])
    )

    assert [e["id"] for e in evidence["entities"]] == [ids["alice"], ids["acme"]]
    assert [e["id"] for e in evidence["edges"]] == [ids["works_at"]]
    assert evidence["passages"] == []


def test_duplicate_edge_ids_are_collapsed(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)

    evidence = evidence_for(api, fake_anthropic, reply_citing(entities=[1, 1], edges=[1, 1, 1]))

    assert [e["id"] for e in evidence["edges"]] == [1]
    assert [e["id"] for e in evidence["entities"]] == [1, 2]


def test_the_endpoints_of_every_cited_edge_are_added_to_the_entities(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)

    evidence = evidence_for(api, fake_anthropic, reply_citing(entities=[], edges=[1]))

    assert [(e["id"], e["name"]) for e in evidence["entities"]] == [(1, "Alice"), (2, "Acme")]


def test_evidence_is_ordered_by_id(api, db, fake_anthropic, fake_openai):
    graph, ids = alice_works_at_acme(db)
    paris = graph.entity("Paris", "place")
    lives = graph.edge(ids["alice"], paris, "lives_in", "Alice lives in Paris.")

    evidence = evidence_for(api, fake_anthropic, reply_citing(entities=[paris, 2, 1], edges=[lives, 1]))

    assert [e["id"] for e in evidence["entities"]] == sorted([paris, 2, 1])
    assert [e["id"] for e in evidence["edges"]] == sorted([lives, 1])


def test_the_three_lists_are_always_arrays(api, db, fake_anthropic, fake_openai):
    alice_works_at_acme(db)

    evidence = evidence_for(api, fake_anthropic, {"answer": "Alice works at Acme."})

    assert evidence == {"entities": [], "edges": [], "passages": []}


def test_edge_fields_omit_artifact_id_if_unset_and_null_times_but_keep_created_at(
    api, db, fake_anthropic, fake_openai
):
    graph, ids = alice_works_at_acme(db)
    paris = graph.entity("Paris", "place")
    lived = graph.edge(
        ids["alice"],
        paris,
        "lives_in",
        valid_at=datetime(2023, 1, 1, tzinfo=UTC),
        invalid_at=datetime(2024, 3, 1, tzinfo=UTC),
        created_at=T0,
    )

    # asked about it: the ranked context keeps the facts the question is about
    evidence = evidence_for(api, fake_anthropic, reply_citing(edges=[lived]), "Where did Alice live?")

    assert evidence["edges"] == [
        {
            "id": lived,
            "source_id": ids["alice"],
            "target_id": paris,
            "source": "Alice",
            "target": "Paris",
            "relation": "lives_in",
            "valid_at": "2023-01-01T00:00:00Z",
            "invalid_at": "2024-03-01T00:00:00Z",
            "created_at": "2025-01-31T09:00:00Z",
        }
    ]


def test_a_cited_passage_is_the_chunk_as_it_was_given(api, db, fake_anthropic, fake_openai):
    graph = Graph(db)
    text = graph.text("a long text")
    question = "When did Alice join Acme?"
    with_text = graph.chunk(text, 0, "Alice joined Acme in 2023.", "Alice joined Acme.")
    summary_only = graph.chunk(text, 1, "Unrelated words here.", "Acme hired Alice.")
    # The question finds the first chunk by its text and by its summary (cosine 1), the second by
    # its summary only (0.91), after three chunks found by their text only (1): it is not in the best 3.
    vector = fake_openai.vector("Alice joined Acme in 2023.")
    fake_openai.override(question, vector)
    db.execute(
        "UPDATE gb_artifacts SET summary_embedding = %s::vector WHERE id = %s",
        [vector_literal(vector), with_text],
    )
    db.execute(
        "UPDATE gb_artifacts SET summary_embedding = %s::vector WHERE id = %s",
        [vector_literal(fake_vector("Alice joined Acme in 2023 too.")), summary_only],
    )
    for i in range(2, 5):
        graph.chunk(text, i, "Alice joined Acme in 2023.", None)

    evidence = evidence_for(
        api, fake_anthropic, reply_citing("In 2023.", passages=[summary_only, with_text]), question
    )

    assert evidence["passages"] == [
        {
            "artifact_id": with_text,
            "parent_id": text,
            "index": 0,
            "summary": "Alice joined Acme.",
            "text": "Alice joined Acme in 2023.",
        },
        {"artifact_id": summary_only, "parent_id": text, "index": 1, "summary": "Acme hired Alice."},
    ]
