"""Stage `detect_geo`: the places a question mentions, as written (SPEC section 9), for the
geo resolver to find their coordinates."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field

DETECT_GEO_MAX_TOKENS = 512
# A question names few places; more are not searched around.
MAX_PLACES = 10

DETECT_GEO_SYSTEM = """You find the geographic places a question mentions: cities, countries, regions,
addresses, landmarks. Give each name exactly as the question writes it, once; not people,
organisations or anything that is not a place on a map. Answer with only a JSON object, no prose:
{"places": ["Paris", "Lyon"]}
{"places": []} when the question mentions no place."""


def _names(value: Any) -> list[str]:
    """Tolerantly: null is [], a single string is one name, blank and non-string items dropped."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ValueError("places must be a list of names")
    names = [item.strip() for item in value if isinstance(item, str) and item.strip()]
    return list(dict.fromkeys(names))[:MAX_PLACES]


class DetectedPlaces(BaseModel):
    """{"places": ["Paris", "Lyon"]}"""

    places: Annotated[list[str], BeforeValidator(_names)] = Field(default_factory=list)


def detect_geo_prompt(question: str) -> tuple[str, str]:
    return DETECT_GEO_SYSTEM, f"<question>\n{question}\n</question>"
