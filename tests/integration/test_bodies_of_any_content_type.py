"""API Gateway forwards a body whatever its Content-Type (the local API takes JSON only, to refuse
web pages' simple requests): the function still reads every body as JSON, and a bad one is a 400
that stores nothing."""

import pytest
from graph_rows import nothing_stored
from remember_helpers import call_handler, remember_handler

NOT_JSON_TYPED = [
    (b"\xff\xfe", "application/octet-stream"),
    (b"[1, 2]", "text/plain"),
    (b'{"user_id": "u1", "text": "Alice", "session_id": "a\\u0000"}', "text/plain"),
]


@pytest.mark.parametrize(("raw", "content_type"), NOT_JSON_TYPED)
def test_a_bad_body_of_another_content_type_is_a_400_that_stores_nothing(db, models, raw, content_type):
    reply = call_handler(remember_handler(), raw=raw, headers={"content-type": content_type})

    assert reply.status == 400, reply.json
    assert set(reply.json) == {"error"} and reply.json["error"]
    assert nothing_stored(db)


def test_a_json_body_sent_as_a_form_is_read_as_json(db, models):
    # `curl -d '{...}'` sends application/x-www-form-urlencoded
    reply = call_handler(
        remember_handler(),
        {"user_id": "u1", "text": " "},
        headers={"content-type": "application/x-www-form-urlencoded"},
    )

    assert reply.status == 400  # read as JSON: the text is empty, not "body must be JSON"
    assert reply.json == {"error": "text must not be empty"}
