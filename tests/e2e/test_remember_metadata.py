"""`metadata` on remember (issue 41): a flat JSON object of the caller's own labels, stored on the
artifact (and its chunks) of a text, an image, facts, an asynchronous remember and a batch; read
back with the artifact; part of a request's identity for Idempotency-Key. Anything else is a 400
that stores nothing."""

from __future__ import annotations

import base64

import pytest
from graph_rows import nothing_stored
from image_files import image_file
from remember_helpers import paragraphs

ALICE = {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "a"}
LABELS = {"source": "crm", "priority": 2, "score": 0.5, "verified": True, "ticket.id": "T-1"}
FACTS = {
    "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
    "edges": [
        {"source": "Alice", "target": "Acme", "relation": "works_at", "description": "Alice works at Acme."}
    ],
}


def remember(api, **fields):
    return api.post("/v1/gb/remember", {**ALICE, **fields})


def stored_metadata(db) -> list[tuple[str, dict]]:
    return db.execute("SELECT kind, metadata FROM gb_artifacts ORDER BY id").fetchall()


def read_back(api, artifact_id: int) -> dict:
    reply = api.get(f"/v1/gb/artifacts/{artifact_id}?user_id=u1")
    assert reply.status == 200, reply.json
    return reply.json


def test_a_texts_metadata_is_stored_on_its_artifact_and_read_back(api, db, models):
    reply = remember(api, metadata=LABELS)

    assert reply.status == 200, reply.json
    assert stored_metadata(db) == [("text", LABELS)]
    assert read_back(api, reply.json["artifact_id"])["metadata"] == LABELS
    session = api.get("/v1/gb/sessions/a?user_id=u1").json
    assert session["artifacts"][0]["metadata"] == LABELS


def test_without_metadata_an_artifact_reads_back_an_empty_object(api, db, models):
    reply = remember(api)

    assert read_back(api, reply.json["artifact_id"])["metadata"] == {}


def test_the_chunks_of_a_long_text_carry_its_metadata(api, db, models):
    reply = remember(api, text=paragraphs(40, 6), metadata={"source": "book"})

    assert reply.status == 200, reply.json
    rows = stored_metadata(db)
    assert len(rows) >= 3
    assert {kind for kind, _ in rows[1:]} == {"chunk"}
    assert all(metadata == {"source": "book"} for _, metadata in rows)


def test_facts_an_image_and_an_asynchronous_text_take_metadata(api, db, models, local_jobs):
    facts = api.post("/v1/gb/remember", {"user_id": "u1", "facts": FACTS, "metadata": {"source": "import"}})
    image = api.post(
        "/v1/gb/remember",
        {"user_id": "u1", "image": base64.b64encode(image_file()).decode(), "metadata": {"source": "camera"}},
    )
    queued = remember(api, text="Bob works at Initech.", metadata={"source": "queue"}, **{"async": True})

    assert (facts.status, image.status, queued.status) == (200, 200, 202), (
        facts.json,
        image.json,
        queued.json,
    )
    assert local_jobs.wait_until_empty(30)
    assert read_back(api, facts.json["artifact_id"])["metadata"] == {"source": "import"}
    assert read_back(api, image.json["artifact_id"])["metadata"] == {"source": "camera"}
    done = read_back(api, queued.json["artifact_id"])
    assert (done["status"], done["metadata"]) == ("done", {"source": "queue"})


def test_a_batch_gives_each_text_the_batchs_metadata_updated_by_its_own(api, db, models, local_jobs):
    reply = api.post(
        "/v1/gb/remember/batch",
        {
            "user_id": "u1",
            "metadata": {"source": "chat", "lang": "en"},
            "texts": [
                {"text": "Alice works at Acme."},
                {"text": "Bob works at Initech.", "metadata": {"lang": "fr", "turn": 2}},
            ],
        },
    )

    assert reply.status == 202, reply.json
    first, second = (a["artifact_id"] for a in reply.json["artifacts"])
    assert local_jobs.wait_until_empty(30)
    assert read_back(api, first)["metadata"] == {"source": "chat", "lang": "en"}
    assert read_back(api, second)["metadata"] == {"source": "chat", "lang": "fr", "turn": 2}


@pytest.mark.parametrize(
    ("metadata", "names"),
    [
        (["crm"], "JSON object"),
        ("crm", "JSON object"),
        ({"source": None}, "string, a finite number or a boolean"),
        ({"source": ["a", "b"]}, "string, a finite number or a boolean"),
        ({"source": {"nested": 1}}, "string, a finite number or a boolean"),
        ({"": "empty key"}, "1-64 characters"),
        ({"with space": 1}, "1-64 characters"),
        ({"k" * 65: 1}, "1-64 characters"),
        ({"clé": 1}, "1-64 characters"),
        ({f"k{i}": i for i in range(33)}, "at most 32 keys"),
        ({"big": "x" * 4100}, "larger than 4096 bytes"),
    ],
)
def test_bad_metadata_is_a_400_that_stores_nothing_and_calls_no_model(api, db, models, metadata, names):
    fake_anthropic, fake_openai = models

    reply = remember(api, metadata=metadata)

    assert reply.status == 400, reply.json
    assert "metadata" in reply.json["error"] and names in reply.json["error"]
    assert nothing_stored(db)
    assert fake_anthropic.messages == [] and fake_openai.embedding_requests == []


def test_a_batch_whose_merged_metadata_is_too_large_is_a_400_that_queues_nothing(api, db, models):
    reply = api.post(
        "/v1/gb/remember/batch",
        {
            "user_id": "u1",
            "metadata": {"a": "x" * 2500},
            "texts": [{"text": "Alice works at Acme.", "metadata": {"b": "y" * 2500}}],
        },
    )

    assert reply.status == 400, reply.json
    assert "texts[0].metadata" in reply.json["error"]
    assert nothing_stored(db)


def test_metadata_is_part_of_the_idempotency_keys_request(api, db, models):
    key = {"Idempotency-Key": "metadata-1"}
    first = api.post("/v1/gb/remember", {**ALICE, "metadata": {"v": 1}}, headers=key)
    replay = api.post("/v1/gb/remember", {**ALICE, "metadata": {"v": 1}}, headers=key)
    other = api.post("/v1/gb/remember", {**ALICE, "metadata": {"v": 2}}, headers=key)

    assert first.status == 200 and replay.status == 200
    assert replay.headers.get("idempotent-replayed") == "true"
    assert replay.json == first.json
    assert other.status == 409
    assert stored_metadata(db) == [("text", {"v": 1})]
