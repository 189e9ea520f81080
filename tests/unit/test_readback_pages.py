"""Pages of the read-back lists: the limit's default and maximum, and opaque cursors that hold
where each list stopped; anything else is a 400 before the database is asked."""

from __future__ import annotations

import base64
import json

import pytest

from gligabao.errors import BadRequest
from gligabao.limits import Limits
from gligabao.memory import readback
from gligabao.settings import InvalidConfiguration, Settings


def test_the_default_limit_is_50_and_the_maximum_500():
    limits = Limits()

    assert (readback.page_size(limits, None), readback.page_size(limits, 500)) == (50, 500)


@pytest.mark.parametrize("limit", [0, -1, 501])
def test_a_limit_outside_1_to_the_maximum_is_a_400(limit):
    with pytest.raises(BadRequest, match=r"^limit must be between 1 and 500$"):
        readback.page_size(Limits(), limit)


def test_the_default_and_the_maximum_are_configurable():
    limits = Settings.from_env({"GB_READBACK_PAGE_DEFAULT": "5", "GB_READBACK_PAGE_MAX": "20"}).limits

    assert readback.page_size(limits, None) == 5
    with pytest.raises(BadRequest, match="between 1 and 20"):
        readback.page_size(limits, 21)


def test_a_maximum_below_the_default_is_an_invalid_configuration_naming_the_variable():
    with pytest.raises(InvalidConfiguration, match=r"^configuration invalid: GB_READBACK_PAGE_MAX: "):
        Settings.from_env({"GB_READBACK_PAGE_MAX": "10"})


def test_a_cursor_is_url_safe_and_reads_back_as_the_position_it_holds():
    from gligabao.memory.cursors import decode_cursor, encode_cursor, row_id

    cursor = encode_cursor("entity", valid_at="2024-01-01T00:00:00+00:00", id=7)

    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert decode_cursor(cursor, "entity", valid_at=readback._timeline_position, id=row_id) == {
        "valid_at": "2024-01-01T00:00:00+00:00",
        "id": 7,
    }


def _cursor(position: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(position).encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "???",
        "bm90IGpzb24",  # "not json"
        _cursor([1, 2]),
        _cursor({"kind": "session", "artifact": 1, "entity": 1, "edge": 1}),  # another route's
        _cursor({"kind": "entity", "valid_at": "2024-01-01", "id": 1}),  # no time zone
        _cursor({"kind": "entity", "valid_at": "-infinity", "id": -1}),
        _cursor({"kind": "entity", "valid_at": "-infinity", "id": 2**63}),
        _cursor({"kind": "entity", "valid_at": "-infinity", "id": True}),
        _cursor({"kind": "entity", "valid_at": None, "id": 1}),
        _cursor({"kind": "entity", "id": 1}),
        _cursor({"kind": "entity", "valid_at": "2020-W01-1T00:00+00:00", "id": 1}),  # an ISO week date
        _cursor(
            {"kind": "entity", "valid_at": "2020-01-01T00:00:00+00:00:00.5", "id": 1}
        ),  # an offset in seconds
        _cursor({"kind": "entity", "valid_at": "0001-01-01T00:00:00+14:00", "id": 1}),  # before the year 1
        _cursor({"kind": "entity", "valid_at": "-infinity", "id": 1, "more": 1}),
        _cursor({"kind": "entity", "valid_at": "-infinity", "id": 1}) + "A",
        "eyJraW5kIjoiZW50aXR5IiwidmFsaWRfYXQiOiItaW5maW5pdHkiLCJpZCI6MSwiaWQiOjJ9",  # a duplicate key
        "A" * 5000,
    ],
)
def test_a_cursor_the_entity_route_did_not_give_is_a_400_before_the_database(cursor):
    with pytest.raises(BadRequest, match=r"^cursor is invalid"):
        readback.read_entity(_NoDatabase(), "u1", 1, cursor=cursor)


@pytest.mark.parametrize(
    "cursor",
    [
        _cursor({"kind": "entity", "valid_at": "-infinity", "id": 1}),
        _cursor({"kind": "session", "artifact": 1, "entity": 1}),
        _cursor({"kind": "session", "artifact": "1", "entity": 1, "edge": 1}),
        _cursor({"kind": "session", "artifact": 1.5, "entity": 1, "edge": 1}),
    ],
)
def test_a_cursor_the_session_route_did_not_give_is_a_400_before_the_database(cursor):
    with pytest.raises(BadRequest, match=r"^cursor is invalid"):
        readback.read_session(_NoDatabase(), "u1", "main", "a", cursor=cursor)


def test_a_page_says_more_remain_only_when_the_query_found_one_more():
    assert readback._page([1, 2, 3], 2) == ([1, 2], True)
    assert readback._page([1, 2], 2) == ([1, 2], False)


class _NoDatabase:
    """A bundle whose database fails the test if it is asked anything."""

    limits = Limits()

    @property
    def database(self):
        raise AssertionError("the database was asked")
