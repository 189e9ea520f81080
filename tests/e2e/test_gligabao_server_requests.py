"""The gligabao server's requests (issue 39), over the local API: its client's remember bodies mean
here what they mean there. `kind` (knowledge or episode) is stored on the artifact, returned and
filtered on in read-back; its stage names are aliases of ours in `models` and `reasoning`, held by
the same allow-list; an image may be bare base64, its type read from its bytes. Bad values are a
400 that stores nothing."""

from __future__ import annotations

import base64

import pytest
from conftest import count_rows, reconfigure
from graph_rows import nothing_stored
from image_files import FORMATS, image_file
from remember_helpers import paragraphs, stages_called

from gligabao.memory.chunking import split_text

ALICE = {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "a"}


def remember(api, **fields):
    return api.post("/v1/gb/remember", {**ALICE, **fields})


def bare(data: bytes) -> str:
    """An image as the gligabao server's client sends it: base64 of its bytes, nothing else."""
    return base64.b64encode(data).decode("ascii")


def memory_kinds(db) -> list[tuple[str, str]]:
    return db.execute("SELECT kind, memory_kind FROM gb_artifacts ORDER BY id").fetchall()


# --- kind -------------------------------------------------------------------------------------


def test_a_text_is_knowledge_by_default_and_says_so(api, db, models):
    reply = remember(api)

    assert reply.status == 200, reply.json
    assert reply.json["kind"] == "knowledge"
    assert memory_kinds(db) == [("text", "knowledge")]


def test_an_episode_is_stored_as_one_and_read_back_as_one(api, db, models):
    reply = remember(api, kind="episode")

    assert reply.status == 200, reply.json
    assert reply.json["kind"] == "episode"
    assert memory_kinds(db) == [("text", "episode")]
    artifact = api.get(f"/v1/gb/artifacts/{reply.json['artifact_id']}?user_id=u1")
    assert (artifact.json["kind"], artifact.json["memory_kind"]) == ("text", "episode")


def test_the_chunks_of_an_episode_are_episode_too(api, db, models):
    text = paragraphs(40, 6)

    reply = remember(api, text=text, kind="episode")

    assert reply.status == 200, reply.json
    assert reply.json["chunk_count"] == len(reply.json["chunks"]) == len(split_text(text)) >= 2
    kinds = memory_kinds(db)
    assert kinds[0] == ("text", "episode")
    assert set(kinds[1:]) == {("chunk", "episode")}


def test_facts_take_a_kind_too(api, db, models):
    facts = {
        "entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"}],
        "edges": [
            {
                "source": "Alice",
                "target": "Acme",
                "relation": "works_at",
                "description": "Alice works at Acme.",
            }
        ],
    }
    reply = api.post("/v1/gb/remember", {"user_id": "u1", "facts": facts, "kind": "episode"})

    assert reply.status == 200, reply.json
    assert reply.json["kind"] == "episode"
    assert memory_kinds(db) == [("facts", "episode")]


def test_an_asynchronous_episode_is_stored_as_one(api, db, models, local_jobs):
    reply = remember(api, kind="episode", **{"async": True})

    assert reply.status == 202, reply.json
    assert local_jobs.wait_until_empty(30)
    artifact = api.get(f"/v1/gb/artifacts/{reply.json['artifact_id']}?user_id=u1").json
    assert (artifact["status"], artifact["memory_kind"]) == ("done", "episode")


def test_a_session_read_back_filters_its_artifacts_by_kind(api, db, models):
    knowledge = remember(api).json["artifact_id"]
    episode = remember(api, text="Bob works at Initech.", kind="episode").json["artifact_id"]

    def listed(kind: str | None = None) -> list[tuple[int, str]]:
        query = "user_id=u1" + (f"&kind={kind}" if kind else "")
        reply = api.get(f"/v1/gb/sessions/a?{query}")
        assert reply.status == 200, reply.json
        return [(a["id"], a["memory_kind"]) for a in reply.json["artifacts"]]

    assert listed() == [(knowledge, "knowledge"), (episode, "episode")]
    assert listed("episode") == [(episode, "episode")]
    assert listed("knowledge") == [(knowledge, "knowledge")]
    assert listed("text") == [(knowledge, "knowledge"), (episode, "episode")]  # our own kind too
    assert listed("image") == []
    bad = api.get("/v1/gb/sessions/a?user_id=u1&kind=memo")
    assert bad.status == 400 and "kind" in bad.json["error"]


@pytest.mark.parametrize("kind", ["memo", "Episode", "", 3, None])
def test_another_kind_is_a_400_that_stores_nothing(api, db, models, kind):
    reply = remember(api, kind=kind)

    if kind is None:  # null is the default, as an absent kind
        assert reply.status == 200 and reply.json["kind"] == "knowledge"
        return
    assert reply.status == 400, reply.json
    assert "kind" in reply.json["error"]
    assert nothing_stored(db)


def test_kind_with_an_image_is_a_400_that_stores_nothing(api, db, models):
    reply = api.post("/v1/gb/remember", {"user_id": "u1", "image": bare(image_file()), "kind": "episode"})

    assert reply.status == 400
    assert reply.json["error"] == "kind is for a text or facts, not an image"
    assert nothing_stored(db)


# --- the stage names --------------------------------------------------------------------------


def test_the_servers_stage_names_choose_our_stages_models_and_levels(api, db, models):
    fake_anthropic, _ = models
    reconfigure(allowed_models="claude-haiku-5-5, claude-sonnet-4-6", max_reasoning="medium")
    remember(api)  # a stored fact, so that the second text's resolve stage is called

    reply = remember(
        api,
        text="Alice works at Initech.",
        models={"extract_graph": "claude-sonnet-4-6", "resolve_edges": "claude-haiku-5-5"},
        reasoning={"summarize_chunk": "none", "extract_graph": "low", "resolve_edges": "medium"},
    )

    assert reply.status == 200, reply.json
    assert stages_called(fake_anthropic)[-2:] == ["extract", "resolve"]
    assert [c["model"] for c in fake_anthropic.messages[-2:]] == ["claude-sonnet-4-6", "claude-haiku-5-5"]
    rows = db.execute(
        "SELECT stage, model, reasoning FROM gb_inferences WHERE stage <> 'embed' ORDER BY id DESC LIMIT 2"
    ).fetchall()
    assert sorted(rows) == [
        ("extract", "claude-sonnet-4-6", "low"),
        ("resolve", "claude-haiku-5-5", "medium"),
    ]


def test_summarize_chunk_sets_the_extract_stage_that_summarizes_the_chunks(api, db, models):
    reconfigure(max_reasoning="low")

    reply = remember(api, text=paragraphs(40, 6), reasoning={"summarize_chunk": "low"})

    assert reply.status == 200, reply.json
    levels = db.execute(
        "SELECT DISTINCT stage, reasoning FROM gb_inferences WHERE stage = 'extract'"
    ).fetchall()
    assert levels == [("extract", "low")]


def test_extract_image_chooses_the_image_stages_model(api, db, models):
    fake_anthropic, _ = models
    reconfigure(allowed_models="claude-haiku-5-5, claude-sonnet-4-6")

    reply = api.post(
        "/v1/gb/remember",
        {"user_id": "u1", "image": bare(image_file()), "models": {"extract_image": "claude-sonnet-4-6"}},
    )

    assert reply.status == 200, reply.json
    assert [m["model"] for m in fake_anthropic.messages] == ["claude-sonnet-4-6"]
    assert stages_called(fake_anthropic) == ["image"]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        (
            "models",
            {"extract_graph": "claude-opus-4-5"},
            "models: model 'claude-opus-4-5' is not allowed here",
        ),
        ("reasoning", {"resolve_edges": "high"}, "reasoning: level 'high' is not allowed here"),
        ("reasoning", {"resolve_series": "max"}, 'reasoning: unknown level "max"'),
        (
            "reasoning",
            {"extract": "none", "extract_graph": "low"},
            '"extract" and "extract_graph" name the same',
        ),
        ("reasoning", {"web_search": "none"}, 'reasoning: unknown stage "web_search"'),
        ("reasoning", {"query": "none"}, '"query" is a stage of query, not of remember'),
    ],
)
def test_an_alias_is_held_by_the_same_rules_as_its_stage(api, db, models, field, value, error):
    reply = remember(api, **{field: value})

    assert reply.status == 400, reply.json
    assert error in reply.json["error"]
    assert nothing_stored(db) and count_rows(db, "gb_inferences") == 0


def test_the_aliases_are_not_query_stages(api, db, models):
    reply = api.post("/v1/gb/query", {"user_id": "u1", "query": "Where?", "models": {"extract_graph": "x"}})

    assert reply.status == 400 and 'unknown stage "extract_graph"' in reply.json["error"]


# --- image as bare base64 ---------------------------------------------------------------------


@pytest.mark.parametrize("media_type", list(FORMATS))
def test_a_bare_base64_image_is_remembered_with_the_type_its_bytes_say(api, db, models, media_type):
    fake_anthropic, _ = models
    data = image_file(media_type)

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "image": bare(data), "session_id": "album"})

    assert reply.status == 200, reply.json
    assert reply.json["description"] == f"A {media_type} picture"
    assert "kind" not in reply.json  # knowledge or episode is a text's
    [block] = fake_anthropic.images
    assert block["source"]["media_type"] == media_type
    row = db.execute("SELECT media_type, bytes FROM gb_image_artifacts").fetchall()
    assert row == [(media_type, len(data))]


def test_a_bare_image_and_the_same_image_as_an_object_are_one_image(api, db, models):
    data = image_file()
    first = api.post(
        "/v1/gb/remember", {"user_id": "u1", "image": {"media_type": "image/png", "data": bare(data)}}
    )

    again = api.post("/v1/gb/remember", {"user_id": "u1", "image": bare(data)})

    assert again.status == 200, again.json
    assert again.json["repeated"] is True
    assert again.json["artifact_id"] == first.json["artifact_id"]


@pytest.mark.parametrize(
    ("image", "error"),
    [
        ("not base64!", "image must be non-empty base64"),
        ("QUJD=", "image must be non-empty base64"),  # wrong padding
        ("", "image must be non-empty base64"),
        (base64.b64encode(b"%PDF-1.7 not an image").decode(), "image: its bytes are none of image/png"),
        (base64.b64encode(b"BM bitmap, no type served").decode(), "image: its bytes are none of"),
    ],
)
def test_a_malformed_or_unknown_bare_image_is_a_400_that_stores_nothing(api, db, models, image, error):
    fake_anthropic, _ = models

    reply = api.post("/v1/gb/remember", {"user_id": "u1", "image": image})

    assert reply.status == 400, reply.json
    assert error in reply.json["error"]
    assert nothing_stored(db) and count_rows(db, "gb_image_artifacts") == 0
    assert fake_anthropic.messages == []


def test_the_gligabao_servers_client_body_is_accepted_whole(api, db, models):
    """The body its client sends for remember(text=..., kind=, models=, reasoning=, reference_time=)."""
    reconfigure(allowed_models="claude-haiku-5-5", max_reasoning="low")
    body = {
        "user_id": "u1",
        "text": "Alice works at Acme.",
        "dataset": "work",
        "kind": "episode",
        "models": {"extract_graph": "claude-haiku-5-5", "resolve_edges": "claude-haiku-5-5"},
        "reasoning": {"summarize_chunk": "none", "resolve_edges": "low"},
        "reference_time": "2025-01-31T09:00:00+00:00",
    }

    reply = api.post("/v1/gb/remember", body)

    assert reply.status == 200, reply.json
    assert (reply.json["dataset"], reply.json["kind"]) == ("work", "episode")
