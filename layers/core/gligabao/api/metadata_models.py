"""`metadata`: the caller's own labels on what it remembers, and the same shape as a filter.

A flat JSON object: at most METADATA_MAX_KEYS keys of 1-64 characters of `A-Z a-z 0-9 _ . -`,
each value a string, a finite number or a boolean (no null, no list, no object), at most
METADATA_MAX_BYTES once serialized as compact UTF-8 JSON. Stored on the artifact (and its chunks);
a filter matches an artifact whose metadata holds every pair it gives (JSON containment).
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

METADATA_KEY_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
METADATA_MAX_KEYS = 32
METADATA_MAX_BYTES = 4096

_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")

METADATA_RULES = (
    f"a flat JSON object: at most {METADATA_MAX_KEYS} keys of 1-64 characters of A-Z a-z 0-9 _ . -, "
    f"each value a string, a finite number or a boolean; at most {METADATA_MAX_BYTES} bytes as compact JSON"
)


def serialized_size(metadata: dict[str, Any]) -> int:
    """The bytes of `metadata` as compact UTF-8 JSON: what the 4 KB limit counts."""
    return len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode())


def _checked(value: Any) -> dict[str, Any]:
    """The metadata as given, or ValueError naming the rule it breaks."""
    if not isinstance(value, dict):
        raise ValueError("metadata must be a JSON object")
    if len(value) > METADATA_MAX_KEYS:
        raise ValueError(f"metadata: at most {METADATA_MAX_KEYS} keys")
    for key, item in value.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise ValueError(f"metadata key {str(key)[:80]!r}: 1-64 characters of A-Z a-z 0-9 _ . -")
        if isinstance(item, bool | str):
            continue
        if isinstance(item, int | float) and math.isfinite(item):
            continue
        raise ValueError(f"metadata[{key!r}] must be a string, a finite number or a boolean")
    if serialized_size(value) > METADATA_MAX_BYTES:
        raise ValueError(f"metadata is larger than {METADATA_MAX_BYTES} bytes as JSON")
    return value


def _documented(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description + " (" + METADATA_RULES + ")",
        "maxProperties": METADATA_MAX_KEYS,
        "propertyNames": {"pattern": METADATA_KEY_PATTERN},
        "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]},
    }


# The value is checked before pydantic sees it (BeforeValidator), so that a list or a nested object
# is refused with the rule's own message, and its key order kept.
Metadata = Annotated[
    dict[str, Any] | None,
    BeforeValidator(lambda value: None if value is None else _checked(value)),
    Field(
        default=None,
        json_schema_extra=_documented("your own labels, stored on the artifact and returned in read-back"),
    ),
]

MetadataFilter = Annotated[
    dict[str, Any] | None,
    BeforeValidator(lambda value: None if value is None else _checked(value)),
    Field(
        default=None,
        json_schema_extra=_documented(
            "only what artifacts holding every one of these pairs stated (facts and entities through "
            "their artifacts)"
        ),
    ),
]
