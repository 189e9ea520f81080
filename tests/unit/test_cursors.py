"""Every paged route's cursor (memory/cursors.py): what a route wrote reads back as the position it
holds; anything else, tampered with in any field, is a 400 before the database is reached."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

import pytest

from gligabao.errors import BadRequest
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory import cursors, datasets, graph_export


def forged(position: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(position).encode()).decode().rstrip("=")


class _NoDatabase:
    """A memory whose database must never be reached."""

    limits = DEFAULT_LIMITS

    @property
    def database(self):
        raise AssertionError("a cursor that is not this route's reached the database")


def test_what_a_route_writes_reads_back_as_its_position():
    moment = datetime(2025, 1, 31, 9, tzinfo=UTC)
    cursor = cursors.encode_cursor("graph-edges", created_at=moment, id=5)

    assert graph_export.decode_cursor(cursor).after_created_at == moment
    assert cursors.decode_cursor(cursors.encode_cursor("edges", after=7), "edges", after=cursors.row_id) == {
        "after": 7
    }
    names = cursors.decode_cursor(
        cursors.encode_cursor("datasets", after="chats-2024"), "datasets", after=cursors.text(64)
    )
    assert names == {"after": "chats-2024"}


@pytest.mark.parametrize(
    "after",
    ["\u0000", "a\u0000b", "\ud800", "x" * 65, 7, None, ["main"]],
)
def test_a_datasets_cursor_whose_name_was_tampered_with_is_a_400(after):
    with pytest.raises(BadRequest, match=r"^cursor is invalid"):
        datasets.dataset_page(_NoDatabase(), "u1", cursor=forged({"kind": "datasets", "after": after}))


@pytest.mark.parametrize(
    "position",
    [
        {"kind": "graph-entities", "after": "\u0000"},
        {"kind": "graph-entities", "after": "\udfff"},
        {"kind": "graph-edges", "created_at": "2020-W01-1T00:00+00:00", "id": 1},
        {"kind": "graph-edges", "created_at": "2020-01-01", "id": 1},
        {"kind": "graph-edges", "created_at": "2020-01-01T00:00:00+00:00:00.25", "id": 1},
        {"kind": "graph-edges", "created_at": "2020-01-01T00:00:00Z", "id": -1},
        {"kind": "graph-edges", "created_at": "2020-01-01T00:00:00Z"},
        {"kind": "edges", "after": 1},
    ],
)
def test_a_graph_export_cursor_tampered_with_is_a_400(position):
    with pytest.raises(BadRequest, match=r"^cursor is invalid"):
        graph_export.decode_cursor(forged(position))


@pytest.mark.parametrize(
    "cursor", ["", "!!!", "e30", forged({"kind": "edges", "after": 1}) + "=A", "A" * 3000]
)
def test_what_is_no_cursor_at_all_is_a_400(cursor):
    with pytest.raises(BadRequest, match=r"^cursor is invalid"):
        cursors.decode_cursor(cursor, "edges", after=cursors.row_id)
