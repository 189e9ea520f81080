"""A correction's `target` name follows the facts' names: control characters removed by
extraction's own clean_text, whitespace collapsed; a name with nothing left is refused, and the
OpenAPI pattern of the field accepts exactly what its validator accepts (every character of the
Basic Multilingual Plane is tried)."""

import json
import re

import pytest

from gligabao.ai.prompts.extract import ExtractedEntity, Extraction
from gligabao.api.app import strict_json_body
from gligabao.api.correction_models import TARGET_NAME_PATTERN, CorrectionRequest
from gligabao.api.facts_models import FactsInput
from gligabao.errors import BadRequest
from gligabao.memory.extraction import merge_extractions
from gligabao.timefmt import parse_rfc3339

BMP = [chr(code) for code in range(0x10000) if not 0xD800 <= code <= 0xDFFF]
NOW = parse_rfc3339("2025-01-31T00:00:00Z")


def _target(value: str):
    return CorrectionRequest.model_validate({"user_id": "u1", "target": value}).target


def _accepts(value: str) -> bool:
    """Whether PATCH takes the name: its JSON body read as the API reads it (a NUL in any string is
    refused there), then the model."""
    try:
        body = strict_json_body(json.dumps({"user_id": "u1", "target": value}))
        CorrectionRequest.model_validate(body)
    except (ValueError, BadRequest):
        return False
    return True


def _facts_name(value: str) -> str:
    """The name an entity of the facts is stored under (the facts' validation, then the merge)."""
    facts = FactsInput.model_validate({"entities": [{"name": value}]})
    entities = [ExtractedEntity(name=e.name, type="unknown", description="") for e in facts.entities]
    [entity] = merge_extractions([Extraction(entities=entities, edges=[])], NOW).entities
    return entity.name


@pytest.mark.parametrize(
    "value",
    ["Ini\u001btech", "\u009bIni\u0001tech\u0007", "  Globex \u000b\u0085 Corp ", "A\u0080\u009fB", "Acme"],
)
def test_a_target_name_is_the_name_the_facts_would_store(value):
    assert _target(value) == _facts_name(value)
    assert _target(value).isprintable()


@pytest.mark.parametrize(
    ("value", "refusal"),
    [("   ", "must not be empty"), ("\u0001", "only control characters"), ("\u0007 \u009b", "only control")],
)
def test_a_target_name_with_nothing_left_is_refused(value, refusal):
    with pytest.raises(ValueError, match=refusal):
        _target(value)


@pytest.mark.parametrize("place", ["alone", "first", "last"])
def test_the_target_name_pattern_accepts_exactly_what_the_validator_accepts(place):
    shaped = {"alone": "{}", "first": "{}a", "last": "a{}"}[place]
    pattern = TARGET_NAME_PATTERN.replace("$", r"\Z")  # ECMA-262: "$" is the end of the text

    disagreements = [
        hex(ord(ch))
        for ch in BMP
        if (re.search(pattern, shaped.format(ch)) is not None) != _accepts(shaped.format(ch))
    ]

    assert disagreements == []
