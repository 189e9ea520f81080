"""The OpenAPI document states each field's rule as a pattern a fuzzer generates from: each pattern
accepts exactly what the field's validator accepts (every character of the Basic Multilingual Plane
is tried), so generated requests exercise the real rules."""

import base64
import itertools
import re

import pytest

from gligabao.ai.stages import parse_level
from gligabao.api.query_models import QueryRequest
from gligabao.api.remember_models import BASE64_PATTERN, ImageInput, RememberRequest
from gligabao.api.validation import (
    LEVEL_PATTERN,
    NON_BLANK_TEXT_PATTERN,
    SESSION_ID_PATTERN,
    TIME_PATTERN,
    USER_ID_PATTERN,
    check_dataset_name,
    check_user_id,
    resolve_session_id,
)
from gligabao.errors import BadRequest

BMP = [chr(code) for code in range(0x10000) if not 0xD800 <= code <= 0xDFFF]


def _accepts(check, value: str) -> bool:
    try:
        check(value)
    except (ValueError, BadRequest):
        return False
    return True


def _matches(pattern: str, value: str) -> bool:
    # JSON Schema patterns are ECMA-262: "$" is the end of the text, as \Z in Python.
    return re.search(pattern.replace("$", r"\Z"), value) is not None


@pytest.mark.parametrize("place", ["first", "inside", "last"])
def test_the_user_id_pattern_accepts_exactly_what_the_validator_accepts(place):
    shaped = {"first": "{}u1", "inside": "u{}1", "last": "u1{}"}[place]
    disagreements = [
        hex(ord(ch))
        for ch in BMP
        if _matches(USER_ID_PATTERN, shaped.format(ch)) != _accepts(check_user_id, shaped.format(ch))
    ]
    assert disagreements == []


@pytest.mark.parametrize("place", ["alone", "first", "inside", "last"])
def test_the_session_id_pattern_accepts_exactly_what_the_validator_accepts(place):
    shaped = {"alone": "{}", "first": "{}s1", "inside": "s{}1", "last": "s1{}"}[place]
    disagreements = [
        hex(ord(ch))
        for ch in BMP
        if _matches(SESSION_ID_PATTERN, shaped.format(ch)) != _accepts(resolve_session_id, shaped.format(ch))
    ]
    assert disagreements == []


def test_a_session_id_trimmed_of_tabs_and_newlines_matches_the_pattern():
    for value in (" chat-42\n", "\t\tchat 42 \r\n", "", " \t "):
        assert _matches(SESSION_ID_PATTERN, value) and _accepts(resolve_session_id, value), repr(value)
    for value in ("chat\x0042", "a\tb", "\x85a\x01"):
        assert not _matches(SESSION_ID_PATTERN, value) and not _accepts(resolve_session_id, value), repr(
            value
        )


@pytest.mark.parametrize("place", ["alone", "first", "last"])
def test_the_text_pattern_accepts_exactly_the_texts_that_are_not_blank(place):
    shaped = {"alone": "{}", "first": "{}a", "last": "a{}"}[place]

    def not_blank(value: str) -> None:
        RememberRequest.model_validate({"user_id": "u1", "text": value})

    disagreements = [
        hex(ord(ch))
        for ch in BMP
        if _matches(NON_BLANK_TEXT_PATTERN, shaped.format(ch)) != _accepts(not_blank, shaped.format(ch))
    ]
    assert disagreements == []


def test_the_level_pattern_accepts_any_case_and_surrounding_whitespace_as_parse_level_does():
    candidates = ["none", "LOW", " Medium\t", "high\u3000", "hi gh", "lowest", "", "n0ne", "\u212aow"]
    candidates += [
        level[:i] + ch + level[i + 1 :] for level in ("low", "high") for i in range(3) for ch in BMP[::97]
    ]
    disagreements = [c for c in candidates if _matches(LEVEL_PATTERN, c) != _accepts(parse_level, c)]
    assert disagreements == []


def test_image_data_is_base64_with_exact_padding_as_its_pattern_says():
    alphabet = "A/+=-_ \n"
    candidates = ["".join(chars) for n in range(6) for chars in itertools.product(alphabet, repeat=n)]
    candidates += ["QUJD", "QUI=", "QQ==", "QQ=", "QUJDRA==", "QUJDRA=", "QUJDRA", "QUJD="]

    def image_data(value: str) -> None:
        ImageInput.model_validate({"media_type": "image/png", "data": value})

    disagreements = [c for c in candidates if _matches(BASE64_PATTERN, c) != _accepts(image_data, c)]
    assert disagreements == []
    for value in (c for c in candidates if _matches(BASE64_PATTERN, c)):
        assert base64.b64decode(value, validate=True)


@pytest.mark.parametrize(
    "value",
    [
        "2025-01-31T09:00:00Z",
        " 2025-01-31t09:00:00.123456+02:00\n",
        "2025-01-31 09:00:00z",
        "0001-01-01T00:00:00Z",
    ],
)
def test_the_time_pattern_matches_the_times_remember_and_query_accept(value):
    assert _matches(TIME_PATTERN, value)
    RememberRequest.model_validate({"user_id": "u1", "text": "Alice", "reference_time": value})
    QueryRequest.model_validate({"user_id": "u1", "query": "Where?", "as_of": value})


@pytest.mark.parametrize(
    "value", ["2025-01-31", "2025-01-31T09:00:00", "٢٠٢٥-01-31T09:00:00Z", "2025-01-31T09:00:00Z\nx"]
)
def test_a_time_outside_the_time_pattern_is_refused_by_remember_and_query(value):
    assert not _matches(TIME_PATTERN, value)
    with pytest.raises(ValueError):
        RememberRequest.model_validate({"user_id": "u1", "text": "Alice", "reference_time": value})
    with pytest.raises(ValueError):
        QueryRequest.model_validate({"user_id": "u1", "query": "Where?", "as_of": value})


@pytest.mark.parametrize("name", ["main\n", "main\r\n", "", "a" * 65, "main set", "mäin"])
def test_a_dataset_name_outside_its_pattern_is_refused_even_with_a_trailing_newline(name):
    assert not _accepts(check_dataset_name, name)
