"""The rules every input of the API follows, wherever it comes from (a body, a query-string
parameter, a path parameter, a cursor): text PostgreSQL can store (no NUL, no unpaired surrogate),
JSON parsed strictly (bounded depth, no duplicate keys, numbers that fit), times in RFC 3339 only
(gligabao/timefmt.py). One module, so that no path into the service is looser than another.

Refusals are `InvalidInput` (a BadRequest and a ValueError) whose message names the problem: the
API answers them with a 400 wherever they are raised.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

from gligabao.errors import BadRequest

DEFAULT_MAX_DEPTH = 64  # limits.json_max_depth's default: the body's own limit is configurable


class InvalidInput(BadRequest, ValueError):
    """Input the service does not take; its message names what is wrong. A 400 wherever it is
    raised, and a ValueError to pydantic's validators and the cursors' checks."""


def storable(text: str) -> bool:
    """Text PostgreSQL can be sent: no NUL, no unpaired surrogate."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


NOT_STORABLE = "strings must not contain NUL characters or unpaired surrogates"

# The names a path carries (a dataset's, an ontology's): 1-64 characters of A-Z a-z 0-9 _ . -, but
# "." and "..", which are path segments (the directory itself, its parent) that clients and gateways
# resolve away (/v1/gb/datasets/../graph): no path could reach what they name.
PATH_NAME_PATTERN = r"^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,64}$"
PATH_NAME_RULE = "1-64 characters of A-Z a-z 0-9 _ . -, but not . or .."
_PATH_NAME = re.compile(PATH_NAME_PATTERN)


def check_path_name(value: str, what: str) -> str:
    """`value` if it is a name a path can carry (PATH_NAME_PATTERN), else InvalidInput saying why."""
    if value in (".", ".."):
        raise InvalidInput(
            f"{what} must not be {value!r}: no path could name it (. and .. are path segments)"
        )
    if not _PATH_NAME.fullmatch(value):  # fullmatch: "main\n" is not "main"
        raise InvalidInput(f"{what} must be 1-64 characters of A-Z a-z 0-9 _ . -")
    return value


def check_storable(text: str, where: str) -> str:
    if not storable(text):
        raise InvalidInput(f"{where}: {NOT_STORABLE}")
    return text


def strict_json(text: str, *, where: str = "body", max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """JSON text, refusing what json.loads would let through or fail on unexpectedly: nesting deeper
    than `max_depth`, numbers Python cannot convert or that are not finite (NaN, Infinity, 1e999),
    duplicate keys (which one counts?), and strings PostgreSQL cannot store (NUL, unpaired
    surrogates). `where` names the input in the messages ("body", "metadata", "cursor"). Text that
    is no JSON at all is json.JSONDecodeError (a ValueError), as json.loads raises it."""
    invalid = f"invalid JSON {where}" if where == "body" else f"{where}: invalid JSON"

    def without_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                raise InvalidInput(f"{invalid}: duplicate key {shown(key)}")
            found[key] = value
        return found

    def integer(literal: str) -> int:
        digits = len(literal.lstrip("-"))
        if digits > sys.get_int_max_str_digits():
            raise InvalidInput(
                f"{invalid}: a number has {digits} digits (at most {sys.get_int_max_str_digits()})"
            )
        return int(literal)

    def finite(literal: str) -> float:
        number = float(literal)
        if not math.isfinite(number):
            raise InvalidInput(f"{invalid}: the number {shown(literal)} is out of range")
        return number

    def not_a_number(name: str) -> Any:
        raise InvalidInput(f"{invalid}: {name} is not a JSON number")

    try:
        value = json.loads(
            text,
            object_pairs_hook=without_duplicate_keys,
            parse_int=integer,
            parse_float=finite,
            parse_constant=not_a_number,
        )
    except RecursionError:  # the decoder nests one C call per level: thousands of "[" exhaust it
        raise InvalidInput(f"{invalid}: nested deeper than {max_depth} levels") from None
    _check_depth_and_text(
        value, where=where, max_depth=max_depth, too_deep=f"{invalid}: nested deeper than {max_depth} levels"
    )
    return value


def _check_depth_and_text(value: Any, *, where: str, max_depth: int, too_deep: str) -> None:
    """Walks a parsed value without recursion: too deep a nesting, or a string (a key included)
    PostgreSQL cannot store, is an InvalidInput naming where it is."""
    pending: list[tuple[Any, str, int]] = [(value, where, 0)]
    while pending:
        item, path, depth = pending.pop()
        if isinstance(item, str):
            check_storable(item, path)
        elif isinstance(item, (dict, list)):
            if depth >= max_depth:
                raise InvalidInput(too_deep)
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in reversed(list(children)):
                if isinstance(item, dict):
                    inner = key if path == "body" else f"{path}.{key}"
                    check_storable(key, inner)
                else:
                    inner = f"{path}[{key}]"
                pending.append((child, inner, depth + 1))


def shown(text: str, most: int = 40) -> str:
    return json.dumps(text if len(text) <= most else text[:most] + "...")
