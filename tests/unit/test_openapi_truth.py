"""The OpenAPI document tells the truth: each route lists exactly the statuses it answers (never
Powertools' 422), each error with the {"error": ...} body, and the request schemas carry the rules
the validators enforce, with the container's limits."""

import json

import pytest
from conftest import ROOT, reconfigure

from gligabao.api.app import openapi_document
from gligabao.api.remember_models import BASE64_PATTERN
from gligabao.api.routes import all_routers
from gligabao.limits import Limits
from gligabao.local.server import LocalApi

STATUSES = {
    ("/v1/gb/health", "get"): {"200", "503"},
    ("/v1/gb/openapi.json", "get"): {"200", "503"},
    ("/v1/gb/datasets", "get"): {"200", "400", "503"},
    ("/v1/gb/datasets/{dataset}", "delete"): {"204", "400", "404", "503"},
    ("/v1/gb/datasets/{dataset}/graph", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/datasets/{dataset}/ontology", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/datasets/{dataset}/ontology", "put"): {"200", "400", "404", "503"},
    ("/v1/gb/datasets/{dataset}/ontology", "delete"): {"204", "400", "404", "503"},
    ("/v1/gb/ontologies", "post"): {"201", "400", "409", "413", "503"},
    ("/v1/gb/ontologies", "get"): {"200", "400", "503"},
    ("/v1/gb/ontologies/{name}", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/ontologies/{name}", "put"): {"200", "400", "404", "413", "503"},
    ("/v1/gb/ontologies/{name}", "delete"): {"204", "400", "404", "409", "503"},
    ("/v1/gb/sessions/{session_id}", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/artifacts/{artifact_id}", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/entities/{entity_id}", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/artifacts/{artifact_id}", "delete"): {"200", "400", "404", "409", "503"},
    ("/v1/gb/entities/{entity_id}", "delete"): {"200", "400", "404", "503"},
    ("/v1/gb/edges/{edge_id}", "delete"): {"200", "400", "404", "503"},
    ("/v1/gb/edges/{edge_id}", "patch"): {"200", "400", "404", "409", "502", "503"},
    ("/v1/gb/edges/{edge_id}/restore", "post"): {"200", "400", "404", "409", "503"},
    ("/v1/gb/users/{user_id}", "delete"): {"200", "400", "503"},
    ("/v1/gb/edges/{edge_id}", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/edges", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/timeseries", "post"): {"200", "400", "404", "413", "503"},
    ("/v1/gb/timeseries", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/timeseries/{series_id}", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/entities/{entity_id}/timeseries", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/search", "post"): {"200", "400", "404", "413", "502", "503"},
    ("/v1/gb/graph", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/remember", "post"): {"200", "202", "400", "409", "413", "502", "503"},
    ("/v1/gb/remember/batch", "post"): {"202", "400", "409", "413", "503"},
    ("/v1/gb/eval/remember", "post"): {"200", "202", "400", "409", "413", "502", "503"},
    ("/v1/gb/query", "post"): {"200", "400", "404", "413", "502", "503"},
    ("/v1/gb/eval/query", "post"): {"200", "400", "404", "413", "502", "503"},
    ("/v1/gb/trajectories", "get"): {"200", "400", "404", "503"},
    ("/v1/gb/trajectories/{trajectory_id}", "get"): {"200", "400", "404", "503"},
}


def test_every_route_lists_exactly_the_statuses_it_answers():
    document = openapi_document(all_routers())

    listed = {
        (path, method): set(operation["responses"])
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    }
    assert listed == STATUSES


def test_no_route_promises_a_422_and_its_schemas_are_gone():
    text = json.dumps(openapi_document(all_routers()))

    assert '"422"' not in text
    assert "HTTPValidationError" not in text and "ValidationError" not in text


def test_every_error_status_is_documented_with_the_error_body():
    document = openapi_document(all_routers())

    for operations in document["paths"].values():
        for operation in operations.values():
            for status, response in operation["responses"].items():
                if status == "204":  # no body
                    assert "content" not in response
                    continue
                schema = response["content"]["application/json"]["schema"]
                if not status.startswith("2"):
                    assert schema == {"$ref": "#/components/schemas/ErrorBody"}, status
    assert document["components"]["schemas"]["ErrorBody"]["required"] == ["error"]


def test_request_schemas_carry_the_validators_rules():
    schemas = openapi_document(all_routers())["components"]["schemas"]
    remember, query = schemas["RememberRequest"]["properties"], schemas["QueryRequest"]["properties"]

    assert remember["user_id"]["maxLength"] == 256 and remember["user_id"]["pattern"].startswith("^[^")
    assert remember["dataset"]["pattern"] == r"^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,64}$"  # not . or ..
    assert remember["session_id"]["anyOf"][0]["maxLength"] == 128
    assert remember["text"]["anyOf"][0]["minLength"] == 1
    assert query["query"]["minLength"] == 1 and "pattern" in query["query"]
    assert query["reasoning"]["anyOf"][1]["propertyNames"] == {"enum": ["query", "detect_geo"]}
    # with the gligabao server's names of the same stages, and its idle timeseries stage
    assert remember["reasoning"]["anyOf"][1]["propertyNames"] == {
        "enum": [
            *("extract", "resolve", "image"),
            *("extract_graph", "summarize_chunk", "resolve_edges", "extract_image", "resolve_series"),
        ]
    }
    assert remember["models"]["anyOf"][0]["propertyNames"] == {
        "enum": [
            "extract",
            "resolve",
            "image",
            "web_search",  # its model, allow-listed like the others (reasoning: none, as the server has)
            "resolve_series",  # the fetch's assignment of providers to entities
            "extract_graph",
            "summarize_chunk",
            "resolve_edges",
            "extract_image",
        ]
    }
    assert remember["kind"]["enum"] == ["knowledge", "episode"]
    assert {"$ref": "#/components/schemas/ImageInput"} in remember["image"]["anyOf"]
    assert {"type": "string", "pattern": BASE64_PATTERN, "contentEncoding": "base64"}.items() <= next(
        a for a in remember["image"]["anyOf"] if a.get("type") == "string"
    ).items()
    assert query["geo_nearby"]["anyOf"] == [{"const": False}, {"type": "null"}]  # geo is off
    assert query["geo_radius_km"]["type"] == "null"
    assert schemas["ImageInput"]["properties"]["media_type"]["enum"] == [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    ]
    assert schemas["RememberRequest"]["additionalProperties"] is False
    assert remember["caption"]["anyOf"][0] == {"type": "string", "maxLength": 4000}


def test_with_geo_on_the_geo_fields_are_documented_with_their_bounds():
    reconfigure(geo=True)

    query = openapi_document(all_routers())["components"]["schemas"]["QueryRequest"]["properties"]

    assert query["geo_nearby"]["anyOf"] == [{"type": "boolean"}, {"type": "null"}]
    assert query["geo_radius_km"]["anyOf"][0] == {"type": "number", "exclusiveMinimum": 0, "maximum": 20015}


def test_with_jwt_auth_every_route_documents_its_401_and_403():
    reconfigure(auth_mode="jwt")

    document = openapi_document(all_routers())

    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert {"401", "403"} <= set(operation["responses"]), (path, method)
    assert document["security"] == [{"jwt": []}]
    assert document["components"]["securitySchemes"]["jwt"]["scheme"] == "bearer"


def test_without_jwt_auth_no_route_documents_a_401_or_403():
    statuses = {
        status
        for operations in openapi_document(all_routers())["paths"].values()
        for operation in operations.values()
        for status in operation["responses"]
    }

    assert not statuses & {"401", "403"}


def test_the_documented_limits_are_the_configured_ones():
    reconfigure(limits=Limits(user_id_max_bytes=40, session_id_max_bytes=20, image_caption_max_chars=30))

    document = openapi_document(all_routers())

    user_id = document["paths"]["/v1/gb/datasets"]["get"]["parameters"][0]["schema"]
    assert user_id["maxLength"] == 40 and "at most 40 bytes" in user_id["description"]
    session = document["components"]["schemas"]["QueryRequest"]["properties"]["session_id"]
    assert session["anyOf"][0]["maxLength"] == 20
    caption = document["components"]["schemas"]["RememberRequest"]["properties"]["caption"]
    assert caption["anyOf"][0]["maxLength"] == 30 and "at most 30 characters" in caption["description"]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/gb/remember", "POST"),
        ("GET", "/v1/gb/query", "POST"),
        ("POST", "/v1/gb/datasets", "GET"),
        ("POST", "/v1/gb/datasets/main", "DELETE"),
        ("PATCH", "/v1/gb/artifacts/7", "DELETE, GET"),
        ("PUT", "/v1/gb/graph", "GET"),
        ("OPTIONS", "/v1/gb/health", "GET"),
        ("DELETE", "/v1/gb/openapi.json", "GET"),
    ],
)
def test_a_method_the_path_is_not_served_with_is_a_405_listing_the_allowed_ones(method, path, allowed):
    api = LocalApi(ROOT / "template.yaml")

    status, headers, raw = api.invoke(method, path + "?user_id=u1", {}, b"", "-")

    assert status == 405
    assert headers["allow"] == allowed
    assert json.loads(raw) == {"error": f"method {method} not allowed on {path} (allowed: {allowed})"}


def test_the_document_and_the_template_serve_the_same_routes():
    """Every route the deployed API serves (template.yaml's HttpApi events) is in the OpenAPI
    document, with each method the function answers, and every operation of the document is served."""
    import re

    from conftest import ROOT

    from gligabao.local.template_routes import DEFAULT_ROUTE, routes_from_template

    def shape(path: str) -> str:
        return re.sub(r"\{[^}]+\}", "{}", path)

    document = openapi_document(all_routers())
    documented = {(shape(path), method.upper()) for path, ops in document["paths"].items() for method in ops}
    documented_paths = {path for path, _ in documented}
    served = [r for r in routes_from_template(ROOT / "template.yaml") if r.path != DEFAULT_ROUTE]
    served_paths = {shape(r.path) for r in served}
    openapi_path = "/v1/gb/openapi.json"  # served by every function, documented as the document itself
    assert served_paths - {openapi_path} == documented_paths - {openapi_path}
    for route in served:
        if route.method != "ANY":
            assert (shape(route.path), route.method) in documented, route
