"""Opaque cursors of the listing routes (facts, datasets): the last item of a page and the route it
belongs to, as URL-safe base64 JSON. Anything but a cursor of the same route is a 400."""

from __future__ import annotations

import base64
import binascii
import json

from gligabao.errors import BadRequest


def encode_cursor(kind: str, after: int | str) -> str:
    """An opaque position: the last item of a page, for the route `kind`."""
    text = json.dumps({"kind": kind, "after": after}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, kind: str, type_: type = int) -> int | str:
    """The position a cursor of this route holds; anything else is a 400 (never a 500)."""
    try:
        position = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise _invalid_cursor() from None
    if not isinstance(position, dict) or position.get("kind") != kind:
        raise _invalid_cursor()
    after = position.get("after")
    if type_ is int and (isinstance(after, bool) or not isinstance(after, int) or not 0 <= after < 2**63):
        raise _invalid_cursor()
    if type_ is str and not isinstance(after, str):
        raise _invalid_cursor()
    return after


def _invalid_cursor() -> BadRequest:
    return BadRequest("cursor is invalid: pass the next_cursor of the previous page unchanged")
