"""The rules about an image's bytes (memory/images.py) and its limits (limits.py): the magic bytes
must be the declared type, the decoded size at most 4 MiB, and the largest image request must fit
a synchronous Lambda invocation."""

from __future__ import annotations

import base64
import json

import pytest
from image_files import FORMATS, image_body, image_file, png_of_exactly
from pydantic import ValidationError

from gligabao.ai.prompts.image import ImageExtraction, image_prompt
from gligabao.errors import BadRequest, PayloadTooLarge
from gligabao.limits import DEFAULT_LIMITS, IMAGE_REQUEST_OTHER_FIELDS_BYTES, Limits, base64_length
from gligabao.local.server import LOCAL_API_MAX_BODY_BYTES
from gligabao.memory.images import ImageToRemember, check_image, sniffed_media_type
from gligabao.timefmt import parse_rfc3339

LAMBDA_SYNC_PAYLOAD_BYTES = 6_000_000  # "6 MB", read as strictly as it can be (not 6 MiB)
API_GATEWAY_HEAD_BYTES = 10_240  # the request line and headers API Gateway passes on, at most


def image(data: bytes, media_type: str = "image/png", caption: str | None = None) -> ImageToRemember:
    return ImageToRemember(user_id="u1", dataset="main", media_type=media_type, data=data, caption=caption)


@pytest.mark.parametrize("media_type", list(FORMATS))
def test_each_served_file_type_is_recognised_by_its_magic_bytes(media_type):
    assert sniffed_media_type(image_file(media_type)) == media_type


@pytest.mark.parametrize("data", [b"", b"hello", b"BM\x00\x00", b"RIFF\x00\x00\x00\x00WAVE", b"\x89PNG"])
def test_other_bytes_are_no_served_type(data):
    assert sniffed_media_type(data) is None


def test_bytes_of_another_type_than_declared_are_refused():
    with pytest.raises(BadRequest) as refused:
        check_image(image(image_file("image/gif"), "image/png"), DEFAULT_LIMITS)

    assert refused.value.message == "image.data is not image/png: its bytes are image/gif"


def test_the_size_limit_counts_decoded_bytes_and_is_checked_first():
    at_limit = png_of_exactly(DEFAULT_LIMITS.image_max_bytes)
    check_image(image(at_limit), DEFAULT_LIMITS)

    with pytest.raises(PayloadTooLarge):
        check_image(image(b"not even an image" * 300_000, "image/png"), DEFAULT_LIMITS)


def test_a_caption_over_its_limit_is_refused():
    check_image(image(image_file(), caption="c" * 4000), DEFAULT_LIMITS)
    with pytest.raises(BadRequest, match="caption is longer than 4000 characters"):
        check_image(image(image_file(), caption="c" * 4001), DEFAULT_LIMITS)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 4 * 1024 * 1024, 4 * 1024 * 1024 - 1])
def test_base64_length_is_that_of_the_padded_encoding(size):
    assert base64_length(size) == len(base64.b64encode(b"\x00" * size))


def test_the_largest_image_request_fits_a_synchronous_lambda_invocation():
    limits = DEFAULT_LIMITS
    largest_body = limits.remember_image_max_body_bytes
    # The event wraps the body as a JSON string (base64 needs no escaping) with the headers and
    # the request context (a few KB; the head is capped by API Gateway).
    event_overhead = API_GATEWAY_HEAD_BYTES + 8 * 1024

    assert largest_body == 5_592_408 + IMAGE_REQUEST_OTHER_FIELDS_BYTES
    assert largest_body + event_overhead < LAMBDA_SYNC_PAYLOAD_BYTES
    assert largest_body <= LOCAL_API_MAX_BODY_BYTES


def test_the_other_fields_of_the_largest_image_request_fit_their_allowance():
    body = image_body(
        png_of_exactly(DEFAULT_LIMITS.image_max_bytes),
        user_id="\U0001f600" * 64,  # 256 UTF-8 bytes, 12 bytes each as JSON escapes
        session_id="\x7f" * 128,
        dataset="d" * 64,
        caption="\U0001f600" * DEFAULT_LIMITS.image_caption_max_chars,
        reference_time="2025-01-31T09:00:00+01:00",
        reasoning={"image": "medium", "resolve": "medium"},
        models={"image": "m" * 128, "resolve": "m" * 128},
    )

    assert len(json.dumps(body).encode()) <= DEFAULT_LIMITS.remember_image_max_body_bytes


def test_the_image_limit_cannot_be_raised_beyond_what_a_lambda_receives():
    with pytest.raises(ValidationError):
        Limits.from_env({"GB_IMAGE_MAX_BYTES": str(4 * 1024 * 1024 + 1)})
    assert Limits.from_env({"GB_IMAGE_MAX_BYTES": "1000"}).image_max_bytes == 1000


def test_the_vision_prompt_sends_the_image_as_a_base64_block_then_the_caption():
    data = image_file("image/webp")
    now = parse_rfc3339("2025-01-31T09:00:00Z")

    _, content = image_prompt(
        data, "image/webp", caption="Alice in Paris.", reference_time=now, current_time=now
    )

    assert content[0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/webp", "data": base64.b64encode(data).decode()},
    }
    assert content[1]["type"] == "text"
    assert "<caption>\nAlice in Paris.\n</caption>" in content[1]["text"]
    assert "<reference_time>2025-01-31T09:00:00Z</reference_time>" in content[1]["text"]


@pytest.mark.parametrize("description", [None, "", "  \n "])
def test_a_vision_reply_without_a_description_does_not_fit(description):
    with pytest.raises(ValidationError):
        ImageExtraction.model_validate({"entities": [], "edges": [], "description": description})
