"""The Idempotency-Key header of remember: found whatever the case of its name, 1 to 255
printable ASCII characters; and which responses a retry may be given again."""

from __future__ import annotations

import pytest

from gligabao.api.idempotency import idempotency_key, replayable
from gligabao.errors import BadRequest


def event(**headers: str) -> dict:
    return {"headers": headers}


@pytest.mark.parametrize("name", ["idempotency-key", "Idempotency-Key", "IDEMPOTENCY-KEY", "idempotency-KEY"])
def test_the_header_is_found_whatever_the_case_of_its_name(name):
    assert idempotency_key({"headers": {name: "order-7"}}, 255) == "order-7"


def test_without_the_header_there_is_no_key():
    assert idempotency_key(event(**{"content-type": "application/json"}), 255) is None
    assert idempotency_key({}, 255) is None


@pytest.mark.parametrize("value", ["k", "a" * 255, "chat 42/message 7", "~!@#$%^&*()_+{}|:<>?`-=[]\\;',./\""])
def test_a_key_is_1_to_255_printable_ascii_characters(value):
    assert idempotency_key({"headers": {"idempotency-key": value}}, 255) == value


@pytest.mark.parametrize(
    "value", ["", "a" * 256, "clé", "tab\there", "new\nline", "nul\x00", "del\x7f"], ids=repr
)
def test_any_other_key_is_400(value):
    with pytest.raises(BadRequest) as caught:
        idempotency_key({"headers": {"idempotency-key": value}}, 255)

    assert caught.value.message == "Idempotency-Key must be 1 to 255 printable ASCII characters"


def test_the_longest_key_is_configurable():
    with pytest.raises(BadRequest, match="1 to 8 printable"):
        idempotency_key({"headers": {"idempotency-key": "123456789"}}, 8)


@pytest.mark.parametrize("status", [200, 201, 202, 400, 404, 405, 413, 422])
def test_successes_and_client_errors_that_change_nothing_are_replayed(status):
    assert replayable(status)


@pytest.mark.parametrize("status", [401, 403, 408, 409, 429, 500, 501, 502, 503, 504])
def test_server_errors_and_client_errors_of_the_moment_are_not_replayed(status):
    assert not replayable(status)
