"""The JSON object in a model's reply, tolerating code fences and prose around it.

Structured output makes a bare object the norm; models without it (and some
gateways) still wrap it in ```json fences or a sentence of introduction.
"""

from __future__ import annotations

import json
import re

_FENCED = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


class NoJsonObject(ValueError):
    """The reply holds no parseable JSON object."""


def extract_json_object(text: str) -> dict:
    """The reply itself if it is a JSON object, else the first object in a code fence, else in the text;
    its strings cleaned of what no database or HTTP body can carry."""
    for candidate in (text.strip(), *(block.strip() for block in _FENCED.findall(text))):
        parsed = _loads_object(candidate)
        if parsed is not None:
            return _storable(parsed)
    parsed = _first_object_in(text)
    if parsed is None:
        raise NoJsonObject("no JSON object in the reply")
    return _storable(parsed)


def _storable(value):
    """NUL characters and unpaired surrogates (valid JSON escapes, not text) are dropped."""
    if isinstance(value, str):
        return value.replace("\x00", "").encode("utf-8", "ignore").decode("utf-8") if value else value
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_storable(item) for item in value]
    return value


def _loads_object(candidate: str) -> dict | None:
    try:
        parsed = json.loads(candidate)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _first_object_in(text: str) -> dict | None:
    start = text.find("{")
    while start != -1:
        try:
            parsed, _end = _DECODER.raw_decode(text, start)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
        start = text.find("{", start + 1)
    return None
