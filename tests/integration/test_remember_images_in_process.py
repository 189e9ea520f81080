"""remember with an image in-process: the Lambda handler's events (JSON and base64-encoded bodies,
the body limits an invocation can carry), the one transaction, and two remembers of the same image
at once (one artifact; the later one answered as a repeat)."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import count_rows
from graph_rows import nothing_stored
from image_files import image_body, image_file, png_of_exactly
from remember_helpers import call_handler, remember_handler, rule_based_model, use_rule_based_model

from gligabao.limits import DEFAULT_LIMITS

CAPTION = "Alice works at Acme."


@pytest.fixture
def models(fake_anthropic, fake_openai):
    use_rule_based_model(fake_anthropic)
    return fake_anthropic, fake_openai


def test_the_lambda_handler_remembers_an_image(db, models):
    reply = call_handler(
        remember_handler(), image_body(image_file("image/jpeg"), "image/jpeg", caption=CAPTION)
    )

    assert reply.status == 200, reply.json
    assert reply.json["repeated"] is False
    assert count_rows(db, "gb_image_artifacts") == 1


def test_a_base64_encoded_event_of_a_large_image_is_measured_decoded_and_remembered(db, models):
    """API Gateway base64-encodes a body it does not take for text: its limit is the decoded size."""
    body = json.dumps(image_body(png_of_exactly(3 * 1024 * 1024), caption=CAPTION))

    reply = call_handler(remember_handler(), raw=body, headers={"content-type": "application/octet-stream"})

    assert reply.status == 200, reply.json
    assert db.execute("SELECT bytes FROM gb_image_artifacts").fetchone() == (3 * 1024 * 1024,)


def test_the_lambda_handler_answers_413_over_each_limit(db, models):
    handler = remember_handler()
    over_image = image_body(png_of_exactly(DEFAULT_LIMITS.image_max_bytes + 1))
    over_body = image_body(png_of_exactly(DEFAULT_LIMITS.image_max_bytes + 60_000))
    over_text = {"user_id": "u1", "text": "a" * (1024 * 1024)}

    replies = [call_handler(handler, body) for body in (over_image, over_body, over_text)]

    assert [r.status for r in replies] == [413, 413, 413]
    assert replies[0].json["error"].startswith("image is larger than 4194304 bytes")
    assert replies[1].json["error"] == (
        f"request body is larger than {DEFAULT_LIMITS.remember_image_max_body_bytes} bytes"
    )
    assert replies[2].json["error"] == "request body is larger than 1048576 bytes"
    assert models[0].requests == [] and nothing_stored(db)


def test_a_failure_inside_the_store_leaves_no_artifact_and_no_image_row(db, models, monkeypatch):
    from gligabao import bootstrap
    from gligabao.db import images as image_rows
    from gligabao.errors import GbError
    from gligabao.memory.images import ImageToRemember, remember_image

    def failing_insert(*args, **kwargs):
        raise GbError("the database went away")

    monkeypatch.setattr(image_rows, "insert_image", failing_insert)

    with pytest.raises(GbError):
        remember_image(
            bootstrap.bundle(),
            ImageToRemember(
                user_id="u1", dataset="main", media_type="image/png", data=image_file(), caption=CAPTION
            ),
        )

    assert nothing_stored(db) and count_rows(db, "gb_image_artifacts") == 0
    assert [row[0] for row in db.execute("SELECT stage FROM gb_inferences ORDER BY id")] == ["image", "embed"]


def test_two_remembers_of_one_image_at_once_store_it_once(db, models):
    from gligabao import bootstrap
    from gligabao.memory.images import ImageToRemember, remember_image

    fake_anthropic, _ = models
    both_asked = threading.Barrier(2, timeout=10)

    def vision_after_both_asked(body):  # both requests are past the first look for the image
        both_asked.wait()
        return rule_based_model(body)

    fake_anthropic.responder = vision_after_both_asked
    deps, data = bootstrap.bundle(), image_file("image/gif")

    def remember(session_id):
        image = ImageToRemember(
            user_id="u1",
            dataset="main",
            media_type="image/gif",
            data=data,
            caption=CAPTION,
            session_id=session_id,
        )
        return remember_image(deps, image)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(remember, ["a", "b"]))

    assert sorted(r.repeated for r in results) == [False, True]
    assert results[0].artifact_id == results[1].artifact_id
    first = next(r for r in results if not r.repeated)
    assert next(r for r in results if r.repeated).session_id == first.session_id
    assert count_rows(db, "gb_artifacts") == 1 and count_rows(db, "gb_image_artifacts") == 1
    assert count_rows(db, "gb_inferences") == 4  # both vision calls and both embeddings are recorded
