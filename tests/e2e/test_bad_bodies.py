"""Bad input gets a clear 4xx and changes nothing: never a 500, never a stack trace."""

import pytest
from conftest import count_rows

BAD_BODIES = [
    (b"", "application/json"),
    (b"null", "application/json"),
    (b"[]", "application/json"),
    (b"1", "application/json"),
    (b'"s"', "application/json"),
    (b"{", "application/json"),
    (b"\xff\xfe", "application/json"),
    (b'{"user_id": "u1"}{"user_id": "u1"}', "application/json"),
    (b'{"user_id": "u1", "text": "\\ud800", "query": "\\ud800"}', "application/json"),
    (b'{"user_id": "u1", "text": "a\\u0000b", "query": "a\\u0000b"}', "application/json"),
    (b'{"user_id": "u1", "text": "Alice", "query": "Alice", "reasoning": "\\ud800"}', "application/json"),
    (b'{"user_id": "u1", "text": "Alice", "query": "Alice", "session_id": "a\\u0000"}', "application/json"),
]


@pytest.mark.parametrize("path", ["/v1/gb/remember", "/v1/gb/query"])
@pytest.mark.parametrize(("raw", "content_type"), BAD_BODIES)
def test_a_bad_body_is_a_400_that_stores_nothing(
    api, db, fake_anthropic, fake_openai, path, raw, content_type
):
    reply = api.post(path, raw=raw, headers={"content-type": content_type})

    assert reply.status == 400, reply.raw
    assert set(reply.json) == {"error"} and reply.json["error"]
    assert "Traceback" not in reply.raw.decode()
    assert fake_anthropic.messages == [] and fake_openai.embedding_requests == []
    for table in ("gb_datasets", "gb_artifacts", "gb_entities", "gb_edges", "gb_inferences"):
        assert count_rows(db, table) == 0, table
