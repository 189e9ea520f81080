"""The JSON object in a model's reply, found through code fences and prose (SPEC section 8)."""

import pytest

from gligabao.ai.json_reply import NoJsonObject, extract_json_object


def test_a_bare_object_is_parsed():
    assert extract_json_object('{"entities": []}') == {"entities": []}


def test_whitespace_around_the_object_is_ignored():
    assert extract_json_object('\n  {"a": 1}\n\n') == {"a": 1}


def test_an_object_in_a_json_code_fence_is_parsed():
    text = 'Here is the result:\n```json\n{"entities": [{"name": "Alice"}]}\n```\nDone.'
    assert extract_json_object(text) == {"entities": [{"name": "Alice"}]}


def test_an_object_in_a_plain_code_fence_is_parsed():
    assert extract_json_object('```\n{"a": 1}\n```') == {"a": 1}


def test_prose_around_the_object_is_ignored():
    text = 'Sure! The facts are {"facts": [{"fact": 0, "duplicate_of": 12}]} as requested.'
    assert extract_json_object(text) == {"facts": [{"fact": 0, "duplicate_of": 12}]}


def test_braces_in_prose_before_the_object_are_skipped():
    text = 'Using {curly} notation, the answer is {"answer": "Paris"}'
    assert extract_json_object(text) == {"answer": "Paris"}


def test_braces_inside_strings_do_not_end_the_object():
    assert extract_json_object('{"description": "a } and a {"}') == {"description": "a } and a {"}


def test_the_first_object_wins():
    assert extract_json_object('{"a": 1} and then {"b": 2}') == {"a": 1}


@pytest.mark.parametrize("text", ["", "no json here", '{"a": ', "[1, 2, 3]", "```json\n[1]\n```", "null"])
def test_a_reply_without_an_object_raises(text):
    with pytest.raises(NoJsonObject):
        extract_json_object(text)


def test_nul_characters_and_unpaired_surrogates_are_dropped_from_the_reply():
    parsed = extract_json_object(
        '{"name": "Al\\ud800ice\\u0000", "items": [{"k\\ud800": "v\\u0000"}], "n": 1}'
    )

    assert parsed == {"name": "Alice", "items": [{"k": "v"}], "n": 1}
