"""The HTTP contract shared by every function: routing, validation errors as 400, error bodies,
404/405, what a body must be. The Lambda entry points are built by api/handler.py."""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler import depends as powertools_depends
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao import __version__
from gligabao.api.deps import memory
from gligabao.errors import BadRequest, GbError
from gligabao.inputs import check_storable, strict_json
from gligabao.observability.logging import get_logger

API_TITLE = "gligabao"


def error_response(status: int, message: str) -> Response:
    return Response(status, content_types.APPLICATION_JSON, json.dumps({"error": message}))


def validation_message(errors: list[dict]) -> str:
    """One readable sentence for the first validation error, naming the field."""
    if not errors:
        return "invalid request"
    error = errors[0]
    kind, loc = error.get("type", ""), [str(part) for part in error.get("loc", ())]
    if kind == "json_invalid":
        return "invalid JSON body"
    if kind in ("model_attributes_type", "dict_type") and loc in (["body"], []):
        return "body must be a JSON object"
    field = ".".join(part for part in loc[1:] if not part.isdigit() or len(loc) > 2) or (
        loc[0] if loc else "body"
    )
    if kind == "missing":
        return f"{field} is required"
    if kind == "extra_forbidden":
        return f"{field}: unknown field"
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    if message.startswith(field):
        return message
    return f"{field}: {message}"


PathMethods = frozenset[str]


def build_dependency_trees_once() -> None:
    """Powertools (3.37) builds a route's tree of `Depends()` again on every request, reading the
    type hints of the route's function and of each dependency (three `get_type_hints` a query, 0.4
    ms of its 13). The tree depends only on those functions, so it is built once per function;
    `dependency_overrides` still apply, when the tree is solved."""
    build = getattr(powertools_depends, "build_dependency_tree", None)
    if build is not None and not hasattr(build, "cache_info"):
        powertools_depends.build_dependency_tree = functools.cache(build)


build_dependency_trees_once()


def create_app(
    *routers: APIGatewayHttpRouter, methods_elsewhere: Callable[[str], PathMethods] | None = None
) -> APIGatewayHttpResolver:
    """The resolver of one function's routes; `methods_elsewhere(path)` says which methods other
    functions of the API route the path with (path_methods)."""
    app = APIGatewayHttpResolver(enable_validation=True, json_body_deserializer=strict_json_body)
    for router in routers:
        app.include_router(router)

    @app.exception_handler(RequestValidationError)
    def _invalid_request(exc: RequestValidationError) -> Response:
        return error_response(400, validation_message(exc.errors()))

    @app.exception_handler(RequestUnsupportedContentType)
    def _unsupported_content_type(exc: RequestUnsupportedContentType) -> Response:
        return error_response(400, "body must be JSON (content-type application/json)")

    @app.exception_handler(GbError)
    def _known_error(exc: GbError) -> Response:
        return error_response(exc.status, exc.message)

    @app.not_found
    def _not_found(exc: NotFoundError) -> Response:
        event = app.current_event
        routed = path_methods([*app._static_routes, *app._dynamic_routes], event.path)
        if methods_elsewhere is not None:
            routed |= methods_elsewhere(event.path)
        if routed and event.http_method.upper() not in routed:
            return method_not_allowed(event.http_method, event.path, routed)
        return error_response(404, "not found")

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        get_logger().exception("unexpected error", extra={"error_type": type(exc).__name__})
        return error_response(500, "internal error")

    return app


def path_methods(routes: list, path: str) -> PathMethods:
    """The methods routes serve the path with."""
    return frozenset(route.method for route in routes if route.rule.match(path))


def allow_header(allowed: frozenset[str]) -> str:
    return ", ".join(sorted(allowed))


def method_not_allowed(method: str, path: str, allowed: frozenset[str]) -> Response:
    """405, with the Allow header RFC 9110 asks for: the methods the path is served with."""
    response = error_response(
        405, f"method {method} not allowed on {path} (allowed: {allow_header(allowed)})"
    )
    response.headers["Allow"] = allow_header(allowed)
    return response


def error_event(exc: GbError, headers: dict[str, str] | None = None) -> dict:
    """An error answered before routing, in the API Gateway payload 2.0 response format."""
    return {
        "statusCode": exc.status,
        "headers": {"Content-Type": content_types.APPLICATION_JSON, **(headers or {})},
        "body": json.dumps({"error": exc.message}),
        "isBase64Encoded": False,
    }


def strict_json_body(text: str) -> Any:
    """The JSON body, by the rules every input follows (gligabao/inputs.py): nesting deeper than the
    limit, numbers Python cannot convert or that are not finite, duplicate keys and text PostgreSQL
    cannot store are a 400 that names the problem."""
    return strict_json(text, max_depth=memory().limits.json_max_depth)


def checked_parameters(event: dict) -> dict:
    """Every query-string and path parameter by the rules of every input (gligabao/inputs.py): text
    PostgreSQL can store, or a 400 naming the parameter; what a route then makes of each value
    (a list, a JSON object, a time, a cursor) follows the same rules."""
    for name, value in (event.get("queryStringParameters") or {}).items():
        check_storable(name, "query parameter name")
        check_storable(value or "", f"query parameter {name}")
    for name, value in (event.get("pathParameters") or {}).items():
        check_storable(value or "", f"path parameter {name}")
    check_storable(event.get("rawPath") or "", "path")
    return event


def text_body(event: dict) -> dict:
    """Every body of this API is JSON text: a base64-encoded one (API Gateway's choice for some
    content types) is decoded here, and one that is not UTF-8 is a 400. A GET or DELETE is answered
    whatever body it carries: no route of this API reads one."""
    method = ((event.get("requestContext") or {}).get("http") or {}).get("method", "")
    if method in ("GET", "HEAD", "DELETE") or not event.get("isBase64Encoded") or not event.get("body"):
        return event
    try:
        text = base64.b64decode(event["body"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise BadRequest("body must be UTF-8 JSON") from None
    return {**event, "body": text, "isBase64Encoded": False}


def json_whatever_the_content_type(event: dict) -> dict:
    """Every body of this API is JSON: `curl -d '{...}'` sends it as a form, and it is still read as JSON."""
    body = event.get("body") or ""
    headers = event.get("headers") or {}
    content_type = headers.get("content-type", "")
    if event.get("isBase64Encoded") or "json" in content_type or not body.lstrip().startswith("{"):
        return event
    return {**event, "headers": {**headers, "content-type": "application/json"}}


def body_size(event: dict) -> int:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return len(body) * 3 // 4
    return len(body.encode("utf-8"))


def openapi_document(routers: list[APIGatewayHttpRouter]) -> dict:
    app = create_app(*routers)
    schema = app.get_openapi_schema(
        title=API_TITLE, version=__version__, description="Knowledge-graph memory for LLM agents"
    )
    document = _without_unprocessable_entity(
        json.loads(schema.model_dump_json(by_alias=True, exclude_none=True))
    )
    document["paths"][OPENAPI_PATH] = {"get": copy.deepcopy(_OPENAPI_OPERATION)}
    if memory().settings.auth_mode == "jwt":
        _with_jwt_refusals(document)
    return document


def _with_jwt_refusals(document: dict) -> None:
    """With GB_AUTH_MODE=jwt every route needs a bearer token (api/auth.py): 401 without one (API
    Gateway's authorizer answers {"message": "Unauthorized"}), 403 for a user_id not the token's."""
    document.setdefault("components", {}).setdefault("securitySchemes", {})["jwt"] = {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
    }
    document["security"] = [{"jwt": []}]
    error = {"$ref": "#/components/schemas/ErrorBody"}
    gateway = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
    for operations in document["paths"].values():
        for operation in operations.values():
            operation["responses"]["401"] = {
                "description": "no valid bearer token, or a token without a subject",
                "content": {"application/json": {"schema": {"anyOf": [error, gateway]}}},
            }
            operation["responses"]["403"] = {
                "description": "the request names another user than the token's subject",
                "content": {"application/json": {"schema": error}},
            }


# The document's own route, answered by the handler before routing (api/handler.py).
OPENAPI_PATH = "/v1/gb/openapi.json"
_OPENAPI_OPERATION = {
    "tags": ["system"],
    "summary": "This OpenAPI document",
    "operationId": "openapi_document_v1_gb_openapi_json_get",
    "responses": {
        "200": {
            "description": "the OpenAPI 3.1 document of the API",
            "content": {"application/json": {"schema": {"type": "object", "required": ["openapi", "paths"]}}},
        },
        "503": {
            "description": "the configuration is invalid (the variable is named)",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        },
    },
}


def _without_unprocessable_entity(document: dict) -> dict:
    """Powertools documents a 422 on every route when it validates requests; ours answer 400 with
    {"error": ...} instead (each route lists its own statuses), so the 422 and its schemas go. It
    also gives a 204 an empty JSON content: a 204 has no body."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict):
                operation.get("responses", {}).pop("422", None)
                operation.get("responses", {}).get("204", {}).pop("content", None)
    schemas = document.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(name, None)
    return document
