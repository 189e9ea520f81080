"""Opaque cursors of every paged route (facts, datasets, sessions, an entity's timeline, the graph
export): the position after the last item of a page and the route it belongs to, as URL-safe base64
JSON. What comes back is read by the rules of every input (gligabao/inputs.py) and validated field
by field against what the route wrote (its kind, exactly its fields, each of the type and range it
can take), so a tampered cursor is a 400 and never reaches the database as anything but a position.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from gligabao.errors import BadRequest
from gligabao.inputs import strict_json
from gligabao.timefmt import parse_rfc3339, rfc3339

MAX_CURSOR_CHARS = 2048  # a cursor this service writes is a few dozen characters
MAX_ROW_ID = 2**63 - 1

Rule = Callable[[Any], Any]  # a field as decoded -> as the route uses it; ValueError when it cannot be


def row_id(value: Any) -> int:
    """An id a list stopped after (0: before the first)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ROW_ID:
        raise ValueError("not a row id")
    return value


def optional_row_id(value: Any) -> int | None:
    """An id a list stopped after, or None for a list that is done."""
    return None if value is None else row_id(value)


def text(max_chars: int) -> Rule:
    def checked(value: Any) -> str:
        if not isinstance(value, str) or len(value) > max_chars:  # storable: strict_json saw to it
            raise ValueError("not a name")
        return value

    return checked


def time(value: Any) -> datetime:
    """A time as the cursor wrote it (RFC 3339, UTC)."""
    if not isinstance(value, str):
        raise ValueError("not a time")
    return parse_rfc3339(value)


def encode_cursor(kind: str, **position: Any) -> str:
    """An opaque position of the route `kind`: times as RFC 3339, the rest as JSON."""
    fields = {
        name: rfc3339(value) if isinstance(value, datetime) else value for name, value in position.items()
    }
    text_ = json.dumps({"kind": kind, **fields}, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text_.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, kind: str, **rules: Rule) -> dict[str, Any]:
    """The position a cursor of the route `kind` holds, each field by its rule; anything else is a
    400 (never a 500)."""
    return _decoded(cursor, {kind: rules})[1]


def decode_cursor_of(cursor: str, kinds: Mapping[str, Mapping[str, Rule]]) -> tuple[str, dict[str, Any]]:
    """(the kind, the position) of a cursor of one of `kinds` (a route that pages through more than
    one list); anything else is a 400."""
    return _decoded(cursor, kinds)


def _decoded(cursor: str, kinds: Mapping[str, Mapping[str, Rule]]) -> tuple[str, dict[str, Any]]:
    try:
        if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError("too long")
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        if base64.urlsafe_b64encode(raw).decode().rstrip("=") != cursor.rstrip("="):
            raise ValueError("not the base64 this service writes")
        position = strict_json(raw.decode("utf-8"), where="cursor", max_depth=2)
        if not isinstance(position, dict) or position.get("kind") not in kinds:
            raise ValueError("another route's")
        kind = position.pop("kind")
        rules = kinds[kind]
        if set(position) != set(rules):
            raise ValueError("other fields")
        return kind, {name: rule(position[name]) for name, rule in rules.items()}
    except (ValueError, TypeError, UnicodeDecodeError, binascii.Error, OverflowError):
        raise invalid_cursor() from None


def invalid_cursor() -> BadRequest:
    return BadRequest("cursor is invalid: pass the next_cursor of the previous page unchanged")
