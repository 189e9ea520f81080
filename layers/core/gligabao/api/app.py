"""The HTTP contract shared by every function: routing, validation errors as 400, error bodies,
404/405, what a body must be. The Lambda entry points are built by api/handler.py."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao import __version__
from gligabao.errors import BadRequest, GbError
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


def create_app(
    *routers: APIGatewayHttpRouter, other_methods: Callable[[str, str], bool] | None = None
) -> APIGatewayHttpResolver:
    """The resolver of one function's routes; `other_methods(path, method)` says whether another
    function of the API serves the path with another method (405 rather than 404)."""
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
        if _serves_other_methods(app, event.path, event.http_method) or (
            other_methods is not None and other_methods(event.path, event.http_method)
        ):
            return error_response(405, f"method {event.http_method} not allowed on {event.path}")
        return error_response(404, "not found")

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        get_logger().exception("unexpected error", extra={"error_type": type(exc).__name__})
        return error_response(500, "internal error")

    return app


def _serves_other_methods(app: APIGatewayHttpResolver, path: str, method: str) -> bool:
    routes = [*app._static_routes, *app._dynamic_routes]
    return any(route.rule.match(path) and route.method != method.upper() for route in routes)


def error_event(exc: GbError) -> dict:
    """An error answered before routing, in the API Gateway payload 2.0 response format."""
    return {
        "statusCode": exc.status,
        "headers": {"Content-Type": content_types.APPLICATION_JSON},
        "body": json.dumps({"error": exc.message}),
        "isBase64Encoded": False,
    }


def strict_json_body(text: str) -> Any:
    """The JSON body; text PostgreSQL cannot store (NUL, unpaired surrogates) is a 400 naming
    the field, rather than a 500 later."""
    body = json.loads(text)
    field = _unstorable_field(body, "body")
    if field:
        raise BadRequest(f"{field}: strings must not contain NUL characters or unpaired surrogates")
    return body


def _unstorable_field(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = key if path == "body" else f"{path}.{key}"
            found = _unstorable_field(key, inner) or _unstorable_field(item, inner)
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _unstorable_field(item, f"{path}[{index}]")
            if found:
                return found
    return None


def text_body(event: dict) -> dict:
    """Every body of this API is JSON text: a base64-encoded one (API Gateway's choice for some
    content types) is decoded here, and one that is not UTF-8 is a 400."""
    if not event.get("isBase64Encoded") or not event.get("body"):
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
    return json.loads(schema.model_dump_json(by_alias=True, exclude_none=True))
