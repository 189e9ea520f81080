""" "." and ".." are no dataset names: a path segment of them is resolved away by clients and
gateways (/v1/gb/datasets/../graph), so no path could reach such a dataset. The validator refuses
them, and every request schema the OpenAPI document gives a dataset says so in its pattern."""

import itertools
import re

import pytest

from gligabao.api.app import openapi_document
from gligabao.api.query_models import QueryRequest
from gligabao.api.remember_models import RememberRequest
from gligabao.api.routes import all_routers
from gligabao.api.validation import DATASET_NAME_PATTERN, check_dataset_name

# Names of dots and a letter, up to four characters: ".", "..", "...", ".a", "a.", "..a", ...
CANDIDATES = ["".join(chars) for n in range(1, 5) for chars in itertools.product(".a", repeat=n)]
CANDIDATES += ["main", "-", "_", "." * 64, "." * 65, "main\n", ".\n", "..\n", ""]


def _accepts(value: str) -> bool:
    try:
        check_dataset_name(value)
    except ValueError:
        return False
    return True


def _matches(schema: dict, value: str) -> bool:
    """Whether the JSON schema of a string takes the value (ECMA-262: "$" is the end of the text)."""
    pattern = schema["pattern"].replace("$", r"\Z")
    return schema["minLength"] <= len(value) <= schema["maxLength"] and re.search(pattern, value) is not None


@pytest.mark.parametrize("name", [".", ".."])
def test_a_dot_segment_is_refused_naming_why(name):
    with pytest.raises(ValueError, match=f"dataset must not be '{re.escape(name)}': no path could name it"):
        check_dataset_name(name)
    with pytest.raises(ValueError, match="dataset must not be"):
        RememberRequest.model_validate({"user_id": "u1", "text": "Alice", "dataset": name})
    with pytest.raises(ValueError, match="dataset must not be"):
        QueryRequest.model_validate({"user_id": "u1", "query": "Who?", "dataset": name})


@pytest.mark.parametrize("name", ["...", ".a", "a.", "a..b", "..a", ".git", "main"])
def test_other_names_with_dots_stay_names(name):
    assert check_dataset_name(name) == name


def _dataset_schemas(document: dict) -> list[tuple[str, dict]]:
    """Every request schema of a dataset: path and query parameters, and body properties (a
    nullable one by its string branch). Responses name datasets too, as plain strings."""
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "dataset":
                    found.append((f"{method} {path} {parameter['in']}", parameter["schema"]))
    for name, schema in document["components"]["schemas"].items():
        prop = schema.get("properties", {}).get("dataset")
        if prop is not None and ("pattern" in prop or "anyOf" in prop):
            string = next((s for s in prop.get("anyOf", [prop]) if s.get("type") == "string"), prop)
            found.append((name, string))
    return found


def test_every_documented_dataset_pattern_takes_exactly_what_the_validator_takes():
    schemas = _dataset_schemas(openapi_document(all_routers()))

    assert {"RememberRequest", "QueryRequest", "SearchRequest", "CreateOntologyRequest"} <= {
        where for where, _ in schemas
    }
    assert any(where.endswith("{dataset} path") for where, _ in schemas)
    for where, schema in schemas:
        assert schema["pattern"] == DATASET_NAME_PATTERN, where
        disagreements = [c for c in CANDIDATES if _matches(schema, c) != _accepts(c)]
        assert disagreements == [], where


def test_an_ontology_name_follows_the_same_rule_and_its_schemas_say_so():
    from gligabao.api.ontology_models import CreateOntologyRequest

    for name in (".", ".."):
        with pytest.raises(ValueError, match=f"name must not be '{re.escape(name)}'"):
            CreateOntologyRequest.model_validate({"user_id": "u1", "name": name, "content": "<rdf/>"})
    document = openapi_document(all_routers())
    path_schemas = [
        parameter["schema"]
        for path, operations in document["paths"].items()
        if path.startswith("/v1/gb/ontologies/{name}")
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
        if parameter["name"] == "name"
    ]
    body_schema = document["components"]["schemas"]["CreateOntologyRequest"]["properties"]["name"]
    assert path_schemas and all(s["pattern"] == DATASET_NAME_PATTERN for s in [*path_schemas, body_schema])
