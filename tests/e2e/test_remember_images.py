"""remember with an image (SPEC section 7), over the local API: real PNG, JPEG, GIF and WebP files
through one vision call of the real SDK to the fake provider, then the text pipeline; a repeated
image answered from its first remember; the limits and errors."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from conftest import count_rows, reconfigure
from fakes.anthropic_server import Reply
from graph_rows import nothing_stored
from image_files import FORMATS, b64, image_body, image_file, png_of_exactly
from remember_helpers import remember, stages_called

from gligabao.limits import DEFAULT_LIMITS

CAPTION = "Alice works at Acme."


def post(api, body: dict, **kwargs):
    return api.post("/v1/gb/remember", body, **kwargs)


@pytest.mark.parametrize("media_type", list(FORMATS))
def test_each_image_type_is_remembered_as_an_image_artifact_with_its_row(api, db, models, media_type):
    fake_anthropic, _ = models
    data = image_file(media_type)

    reply = post(api, image_body(data, media_type, caption=CAPTION, session_id="album"))

    assert reply.status == 200, reply.json
    body = reply.json
    assert body["repeated"] is False
    assert body["session_id"] == "album"
    assert body["description"] == f"A {media_type} picture captioned: {CAPTION}"
    assert [(e["name"], e["created"]) for e in body["entities"]] == [("Alice", True), ("Acme", True)]
    [edge] = body["edges"]
    assert (edge["relation"], edge["artifact_id"]) == ("works_at", body["artifact_id"])
    sha256 = hashlib.sha256(data).hexdigest()
    artifact = db.execute("SELECT id, kind, text, session_id, content_sha256 FROM gb_artifacts").fetchall()
    assert artifact == [(body["artifact_id"], "image", body["description"], "album", sha256)]
    row = db.execute(
        "SELECT artifact_id, sha256, media_type, bytes, extraction, session_id FROM gb_image_artifacts"
    ).fetchall()
    assert len(row) == 1
    assert row[0][:4] == (body["artifact_id"], sha256, media_type, len(data))
    assert row[0][4]["description"] == body["description"]
    assert [e["name"] for e in row[0][4]["entities"]] == ["Alice", "Acme"]
    assert row[0][5] == "album"
    [block] = fake_anthropic.images
    assert block["source"] == {"type": "base64", "media_type": media_type, "data": b64(data)}
    assert stages_called(fake_anthropic) == ["image"]


def test_the_vision_call_is_one_inference_of_stage_image_and_the_caption_reaches_the_prompt(api, db, models):
    fake_anthropic, _ = models
    reconfigure(max_reasoning="low")

    reply = post(api, image_body(image_file(), caption="  Bob lives in Paris.  ", reasoning="low"))

    assert reply.status == 200, reply.json
    [message] = fake_anthropic.messages
    prompt = next(b["text"] for b in message["messages"][0]["content"] if b["type"] == "text")
    assert "<caption>\nBob lives in Paris.\n</caption>" in prompt
    assert message["thinking"]["type"] == "enabled"  # one level: the image stage's
    rows = db.execute("SELECT stage, reasoning, ok FROM gb_inferences ORDER BY id").fetchall()
    assert [row[0] for row in rows] == ["image", "embed"]
    assert rows[0] == ("image", "low", True)


def test_an_image_without_a_caption_is_described_and_stored(api, db, models):
    reply = post(api, image_body(image_file("image/gif"), "image/gif"))

    assert reply.status == 200, reply.json
    assert reply.json["description"] == "A image/gif picture"
    assert reply.json["entities"] == [] and reply.json["edges"] == []
    assert count_rows(db, "gb_image_artifacts") == 1


def test_a_repeated_image_is_answered_from_its_first_remember_without_a_model_call(api, db, models):
    fake_anthropic, fake_openai = models
    data = image_file("image/webp")
    first = post(api, image_body(data, "image/webp", caption=CAPTION, session_id="a")).json
    calls = (len(fake_anthropic.requests), len(fake_openai.requests))

    again = post(api, image_body(data, "image/webp", caption="Other words.", session_id="b"))

    assert again.status == 200, again.json
    body = again.json
    assert body["repeated"] is True
    assert body["artifact_id"] == first["artifact_id"]
    assert body["session_id"] == "a"  # the first artifact's session, as sessions.md says
    assert body["description"] == first["description"]
    assert [(e["id"], e["created"]) for e in body["entities"]] == [
        (e["id"], False) for e in first["entities"]
    ]
    assert [(e["id"], e["created"]) for e in body["edges"]] == [(e["id"], False) for e in first["edges"]]
    assert (len(fake_anthropic.requests), len(fake_openai.requests)) == calls
    assert count_rows(db, "gb_artifacts") == 1 and count_rows(db, "gb_image_artifacts") == 1
    sessions = db.execute("SELECT DISTINCT session_id FROM gb_entity_sessions").fetchall()
    assert sessions == [("a",)]  # the repeat from session b is not recorded


def test_the_same_image_in_another_dataset_is_no_repeat(api, db, models):
    data = image_file()
    post(api, image_body(data, caption=CAPTION))

    other = post(api, image_body(data, caption=CAPTION, dataset="photos"))

    assert other.status == 200
    assert other.json["repeated"] is False
    assert count_rows(db, "gb_image_artifacts") == 2


def test_another_image_is_no_repeat(api, db, models):
    post(api, image_body(image_file(color=(1, 2, 3))))

    other = post(api, image_body(image_file(color=(3, 2, 1))))

    assert other.json["repeated"] is False
    assert count_rows(db, "gb_artifacts") == 2


def test_an_image_resolves_against_the_texts_graph_and_links_its_session(api, db, models):
    fake_anthropic, _ = models
    text = remember(api, "Alice works at Acme.", session_id="t")

    reply = post(api, image_body(image_file(), caption="Alice lives in Paris.", session_id="photo"))

    assert reply.status == 200, reply.json
    alice = next(e for e in reply.json["entities"] if e["name"] == "Alice")
    assert alice["id"] == text["entities"][0]["id"] and alice["created"] is False
    linked = db.execute(
        "SELECT session_id FROM gb_entity_sessions WHERE entity_id = %s ORDER BY session_id", [alice["id"]]
    ).fetchall()
    assert linked == [("photo",), ("t",)]
    provenance = db.execute(
        "SELECT artifact_id FROM gb_entity_artifacts WHERE entity_id = %s ORDER BY artifact_id", [alice["id"]]
    ).fetchall()
    assert provenance == [(text["artifact_id"],), (reply.json["artifact_id"],)]
    assert stages_called(fake_anthropic) == ["extract", "image", "resolve"]


def test_a_text_response_says_nothing_of_images(api, db, models):
    body = remember(api, "Alice works at Acme.")

    assert "repeated" not in body and "description" not in body


# --- errors


@pytest.mark.parametrize(
    ("declared", "actual", "says"),
    [
        ("image/jpeg", "image/png", "image.data is not image/jpeg: its bytes are image/png"),
        ("image/png", "image/gif", "image.data is not image/png: its bytes are image/gif"),
        ("image/webp", "image/jpeg", "image.data is not image/webp: its bytes are image/jpeg"),
    ],
)
def test_bytes_that_are_not_the_declared_type_are_400_before_any_model_call(
    api, db, models, declared, actual, says
):
    reply = post(api, image_body(image_file(actual), declared))

    assert reply.status == 400
    assert reply.json == {"error": says}
    assert models[0].requests == [] and nothing_stored(db)


@pytest.mark.parametrize(
    "data",
    [b"hello, world", b"BM" + b"\x00" * 60, b"RIFF\x00\x00\x00\x00WAVEfmt "],
    ids=["text", "bmp", "wav"],
)
def test_bytes_of_no_served_image_type_are_400(api, db, models, data):
    reply = post(api, image_body(data))

    assert reply.status == 400
    assert reply.json == {"error": "image.data is not image/png: its bytes are no image type served"}
    assert models[0].requests == [] and nothing_stored(db)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            {**image_body(image_file()), "text": "Alice works at Acme."},
            "exactly one of text, image and facts",
        ),
        (image_body(image_file(), "image/bmp"), "image.media_type"),
        ({"user_id": "u1", "image": {"media_type": "image/png", "data": "iVBORw0KGgo"}}, "image.data"),
        ({"user_id": "u1", "image": {"media_type": "image/png"}}, "image.data is required"),
        (image_body(image_file(), caption="x" * 4001), "caption is longer than 4000 characters"),
        (image_body(image_file(), reasoning={"query": "low"}), "reasoning"),
        (image_body(image_file(), models={"image": "bad name!"}), "models"),
    ],
)
def test_an_invalid_image_request_is_400_naming_the_problem(api, db, models, body, says):
    reply = post(api, body)

    assert reply.status == 400
    assert says in reply.json["error"]
    assert models[0].requests == [] and nothing_stored(db)


def test_an_image_at_the_limit_is_remembered(api, db, models):
    data = png_of_exactly(DEFAULT_LIMITS.image_max_bytes)

    reply = post(api, image_body(data, caption=CAPTION))

    assert reply.status == 200, reply.json
    assert db.execute("SELECT bytes FROM gb_image_artifacts").fetchone() == (4 * 1024 * 1024,)
    assert len(base64.b64decode(models[0].images[0]["source"]["data"])) == 4 * 1024 * 1024


def test_an_image_one_byte_over_the_limit_is_413(api, db, models):
    reply = post(api, image_body(png_of_exactly(DEFAULT_LIMITS.image_max_bytes + 1)))

    assert reply.status == 413
    assert reply.json == {"error": "image is larger than 4194304 bytes (4194305 bytes decoded)"}
    assert models[0].requests == [] and nothing_stored(db)


def test_an_image_body_over_its_limit_is_413_before_it_is_read(api, db, models):
    data = png_of_exactly(DEFAULT_LIMITS.image_max_bytes + 100_000)

    reply = post(api, image_body(data))

    assert reply.status == 413
    assert reply.json == {
        "error": f"request body is larger than {DEFAULT_LIMITS.remember_image_max_body_bytes} bytes"
    }
    assert nothing_stored(db)


def test_a_text_over_1_mib_stays_413_though_an_image_body_may_be_larger(api, db, models):
    reply = post(api, {"user_id": "u1", "text": "a" * (2 * 1024 * 1024), "image": None})

    assert reply.status == 413
    assert reply.json == {"error": "request body is larger than 1048576 bytes"}


def test_a_large_body_naming_both_text_and_image_keeps_the_text_limit(api, db, models):
    body = {**image_body(png_of_exactly(2 * 1024 * 1024)), "text": "Alice works at Acme."}

    reply = post(api, body)

    assert reply.status == 413
    assert nothing_stored(db)


def test_a_lower_configured_image_limit_is_applied(api, db, models):
    reconfigure(limits=DEFAULT_LIMITS.model_copy(update={"image_max_bytes": 1000}))

    reply = post(api, image_body(png_of_exactly(1001)))

    assert reply.status == 413
    assert reply.json["error"].startswith("image is larger than 1000 bytes")


@pytest.mark.parametrize(
    "bad_reply",
    [
        Reply(data={"entities": [], "edges": [], "description": "   "}),
        Reply(data={"entities": [], "edges": []}),
        Reply(text='{"description": "A cat', stop_reason="max_tokens"),
        Reply(text="I cannot see any image."),
    ],
    ids=["blank description", "no description", "truncated", "not JSON"],
)
def test_a_bad_vision_reply_is_502_and_stores_nothing_but_its_inference(api, db, models, bad_reply):
    fake_anthropic, fake_openai = models
    fake_anthropic.queue(bad_reply)

    reply = post(api, image_body(image_file(), caption=CAPTION))

    assert reply.status == 502
    assert "stage image" in reply.json["error"]
    assert nothing_stored(db) and count_rows(db, "gb_image_artifacts") == 0
    assert db.execute("SELECT stage, ok FROM gb_inferences").fetchall() == [("image", False)]
    assert fake_openai.requests == []


def test_a_provider_failure_is_502(api, db, models):
    models[0].queue(Reply.error(500), times=3)

    reply = post(api, image_body(image_file()))

    assert reply.status == 502
    assert nothing_stored(db) and count_rows(db, "gb_image_artifacts") == 0


def test_a_missing_anthropic_key_is_503_without_any_model_call(api, db, models):
    reconfigure(anthropic_api_key=None)

    reply = post(api, image_body(image_file()))

    assert reply.status == 503
    assert models[0].requests == [] and models[1].requests == []
    assert nothing_stored(db)


def test_an_idempotent_image_retry_gets_the_first_response(api, db, models):
    key = {"Idempotency-Key": "image-1"}
    body = image_body(image_file("image/jpeg"), "image/jpeg", caption=CAPTION)
    first = post(api, body, headers=key)
    calls = len(models[0].requests)

    retry = post(api, body, headers=key)

    assert retry.status == 200
    assert retry.headers.get("idempotent-replayed") == "true"
    assert retry.json == first.json
    assert len(models[0].requests) == calls


def test_image_bytes_never_reach_the_logs(api, db, models, capfd):
    data = image_file("image/png", color=(12, 34, 56))
    encoded = b64(data)

    ok = post(api, image_body(data, caption=CAPTION))
    mismatch = post(api, image_body(data, "image/gif"))
    models[0].queue(Reply.error(500), times=3)
    failed = post(api, image_body(image_file(color=(9, 9, 9))))

    assert (ok.status, mismatch.status, failed.status) == (200, 400, 502)
    logged = "".join(capfd.readouterr())
    assert "remember.ok" in logged and "remember.error" in logged
    assert encoded not in logged and encoded[:40] not in logged
    assert json.dumps(encoded)[1:41] not in logged


def test_with_geo_on_an_images_places_are_located_as_a_texts(api, db, models):
    from gligabao.model import Place

    class Paris:
        def resolve(self, names):
            return {name: Place("Paris", 48.8566, 2.3522, "city", "FR") for name in names if name == "Paris"}

    reconfigure(geo=True, place_resolver=Paris())

    reply = post(api, image_body(image_file(), caption="Alice lives in Paris."))

    assert reply.status == 200, reply.json
    assert db.execute(
        "SELECT name, latitude, longitude FROM gb_entities WHERE latitude IS NOT NULL"
    ).fetchall() == [("Paris", 48.8566, 2.3522)]
