"""POST /v1/gb/remember end to end (SPEC section 5): the response, the rows, the prompts,
the model calls, inferences and the monitoring event."""

from __future__ import annotations

from conftest import count_rows, reconfigure
from remember_helpers import remember, stages_called, use_rule_based_model

REFERENCE_TIME = "2025-01-31T09:00:00Z"


def test_remember_answers_the_entities_and_edges_it_stored(api, db, models):
    body = remember(
        api, "Alice is an engineer. Alice works at Acme.", session_id="chat-42", reference_time=REFERENCE_TIME
    )

    alice, acme = body["entities"]
    assert body["session_id"] == "chat-42"
    assert body["dataset"] == "main"
    assert body["chunk_count"] == 0 and body["chunks"] == []
    assert body["superseded"] == []
    assert alice == {
        "id": alice["id"],
        "name": "Alice",
        "type": "person",
        "description": "engineer",
        "created": True,
        "model_id": "claude-haiku-5-5",
    }
    assert acme == {
        "id": acme["id"],
        "name": "Acme",
        "type": "organization",
        "description": "",
        "created": True,
        "model_id": "claude-haiku-5-5",
    }
    [edge] = body["edges"]
    assert edge == {
        "id": edge["id"],
        "source_id": alice["id"],
        "target_id": acme["id"],
        "source": "Alice",
        "target": "Acme",
        "relation": "works_at",
        "description": "Alice works at Acme.",
        "artifact_id": body["artifact_id"],
        "valid_at": REFERENCE_TIME,
        "created_at": edge["created_at"],
        "created": True,
        "model_id": "claude-haiku-5-5",
    }
    assert edge["created_at"].endswith("Z")
    stored = db.execute(
        "SELECT source_id, target_id, relation, artifact_id, valid_at, invalid_at, expired_at, "
        "embedding IS NOT NULL FROM gb_edges"
    ).fetchall()
    assert len(stored) == 1
    assert stored[0][:4] == (alice["id"], acme["id"], "works_at", body["artifact_id"])
    assert stored[0][5:] == (None, None, True)


def test_remember_without_session_omits_session_id(api, db, models):
    body = remember(api, "Alice works at Acme.")

    assert "session_id" not in body
    assert db.execute("SELECT session_id FROM gb_artifacts").fetchall() == [(None,)]


def test_remember_stores_the_text_as_one_artifact_with_its_reference_time(api, db, models):
    body = remember(
        api, "  Alice works at Acme.  ", reference_time="2025-01-31T10:00:00+01:00", session_id=" s1 "
    )

    row = db.execute(
        "SELECT id, kind, text, session_id, parent_id, reference_time, content_sha256 FROM gb_artifacts"
    ).fetchone()
    assert row[:5] == (body["artifact_id"], "text", "Alice works at Acme.", "s1", None)
    assert row[5].isoformat() == "2025-01-31T09:00:00+00:00"
    assert len(row[6]) == 64


def test_remember_creates_the_dataset_on_first_use(api, db, models):
    remember(api, "Alice works at Acme.", dataset="notes")

    assert db.execute("SELECT user_id, name FROM gb_datasets").fetchall() == [("u1", "notes")]
    assert db.execute("SELECT count(DISTINCT dataset_id) FROM gb_entities").fetchone()[0] == 1


def test_an_edge_naming_an_unlisted_entity_creates_it_with_type_unknown(api, db, fake_anthropic, fake_openai):
    fake_anthropic.queue(
        {
            "entities": [{"name": "Alice", "type": "person", "description": ""}],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Acme",
                    "relation": "Works At",
                    "description": "Alice works at Acme.",
                }
            ],
        }
    )

    body = remember(api, "Alice works at Acme.")

    assert [(e["name"], e["type"]) for e in body["entities"]] == [("Alice", "person"), ("Acme", "unknown")]
    assert body["edges"][0]["relation"] == "works_at"
    assert count_rows(db, "gb_entity_artifacts") == 2


def test_types_are_lowercased_and_names_kept_as_written(api, db, fake_anthropic, fake_openai):
    fake_anthropic.queue(
        {
            "entities": [
                {"name": "  Acme   Corp ", "type": "Organization", "description": None},
                {"name": "ACME CORP", "type": "organization"},
            ],
            "edges": [],
        }
    )

    body = remember(api, "Acme Corp.")

    assert [(e["name"], e["type"], e["description"]) for e in body["entities"]] == [
        ("Acme Corp", "organization", "")
    ]
    assert db.execute("SELECT name, normalized_name FROM gb_entities").fetchall() == [
        ("Acme Corp", "acme corp")
    ]


def test_nul_characters_in_a_model_reply_are_dropped(api, db, fake_anthropic, fake_openai):
    fake_anthropic.queue(
        {
            "entities": [{"name": "Al\u0000ice", "type": "per\u0000son", "description": "eng\u0000ineer"}],
            "edges": [
                {
                    "source": "Al\u0000ice",
                    "target": "Acme",
                    "relation": "works_at",
                    "description": "Alice works at Acme.\u0000",
                }
            ],
        }
    )

    body = remember(api, "Alice works at Acme.")

    assert (body["entities"][0]["name"], body["entities"][0]["type"]) == ("Alice", "person")
    assert body["edges"][0]["description"] == "Alice works at Acme."


def test_first_text_of_a_dataset_costs_one_llm_call_and_one_embeddings_request(api, db, models):
    fake_anthropic, fake_openai = models

    remember(api, "Alice works at Acme. Alice lives in Paris. Bob knows Alice.")

    assert stages_called(fake_anthropic) == ["extract"]
    [request] = fake_openai.embedding_requests
    assert sorted(request["input"]) == sorted(
        [
            "Alice (person): ",
            "Acme (organization): ",
            "Paris (place): ",
            "Bob (person): ",
            "Alice works_at Acme: Alice works at Acme.",
            "Alice lives_in Paris: Alice lives in Paris.",
            "Bob knows Alice: Bob knows Alice.",
        ]
    )


def test_a_text_with_facts_to_compare_costs_two_llm_calls_and_one_embeddings_request(api, db, models):
    fake_anthropic, fake_openai = models
    remember(api, "Alice lives in Paris.")
    fake_anthropic.reset()
    use_rule_based_model(fake_anthropic)
    fake_openai.reset()

    body = remember(api, "Alice moved to Lyon in 2025. Alice works at Acme. Bob knows Alice.")

    assert stages_called(fake_anthropic) == ["extract", "resolve"]
    assert len(fake_openai.embedding_requests) == 1
    assert len(body["superseded"]) == 1


def test_extraction_prompt_gives_the_text_reference_time_current_time_and_the_rules(api, db, models):
    fake_anthropic, _ = models

    remember(api, "Alice works at Acme.", reference_time=REFERENCE_TIME)

    [request] = fake_anthropic.messages
    content = request["messages"][0]["content"]
    assert f"<reference_time>{REFERENCE_TIME}</reference_time>" in content
    assert "<current_time>" in content
    assert "<text>\nAlice works at Acme.\n</text>" in content
    system = request["system"] if isinstance(request["system"], str) else request["system"][0]["text"]
    for rule in (
        "lowercase snake_case verb phrase",
        "one lowercase word",
        "ISO 8601",
        "reference time",
        '"entities"',
        '"edges"',
        '"valid_at"',
        '"invalid_at"',
    ):
        assert rule in system
    assert '"summary"' not in system  # asked for chunks only


def test_reasoning_and_models_reach_the_extract_call(api, db, models):
    fake_anthropic, _ = models
    reconfigure(allowed_models="claude-sonnet-4-6", max_reasoning="low")

    remember(api, "Alice works at Acme.", reasoning="low", models={"extract": "claude-sonnet-4-6"})

    [request] = fake_anthropic.messages
    assert request["model"] == "claude-sonnet-4-6"
    assert request["thinking"]["type"] == "enabled"
    inference = db.execute("SELECT model, reasoning FROM gb_inferences WHERE stage = 'extract'").fetchone()
    assert inference == ("claude-sonnet-4-6", "low")


def test_every_model_call_is_an_inference_row_of_the_dataset_session_and_request(api, db, models):
    remember(api, "Alice works at Acme.", session_id="s1")

    rows = db.execute(
        "SELECT stage, type, dataset_id, session_id, request_id, ok, input_tokens "
        "FROM gb_inferences ORDER BY id"
    ).fetchall()
    dataset_id = db.execute("SELECT id FROM gb_datasets").fetchone()[0]
    assert [r[:4] for r in rows] == [
        ("extract", "remember", dataset_id, "s1"),
        ("embed", "remember", dataset_id, "s1"),
    ]
    assert all(r[4] and r[5] and r[6] > 0 for r in rows)
    assert rows[0][4] == rows[1][4]


def test_a_text_with_nothing_to_extract_stores_its_artifact_without_embeddings(
    api, db, fake_anthropic, fake_openai
):
    fake_anthropic.queue({"entities": [], "edges": []})

    body = remember(api, "Hmm.")

    assert body["entities"] == [] and body["edges"] == []
    assert count_rows(db, "gb_artifacts") == 1
    assert fake_openai.embedding_requests == []
