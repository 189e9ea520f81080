"""The Lambda entry point of each function: body limits first, then the routes; for remember and
query, exactly one monitoring event per request, whatever its outcome (400s and 413s included)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.ai.snapstart import import_provider_sdks, reseed_random
from gligabao.api.app import (
    OPENAPI_PATH,
    PathMethods,
    body_size,
    checked_parameters,
    create_app,
    error_event,
    json_whatever_the_content_type,
    openapi_document,
    path_methods,
    text_body,
)
from gligabao.api.auth import authorized
from gligabao.api.deps import invocation_context, invocation_deadline, memory
from gligabao.api.idempotency import once_per_idempotency_key
from gligabao.api.routes import all_routers
from gligabao.bootstrap import preload_geo
from gligabao.db.connection import statements_end_before
from gligabao.errors import BadRequest, GbError, MethodNotAllowed, PayloadTooLarge
from gligabao.limits import Limits
from gligabao.observability.monitoring import RequestReport, reporting
from gligabao.observability.tracing import instrumented

LambdaHandler = Callable[[dict, Any], dict]


def _remember_body_limit(limits: Limits, event: dict) -> int:
    """A text keeps the remember limit (1 MiB); a body that carries an image (and no text) may be as
    large as the largest image's base64 and the other fields (limits.py: about 5.7 MB, which a
    synchronous Lambda invocation, 6 MB, still receives). Only a body between the two is parsed here."""
    size = body_size(event)
    if size <= limits.remember_max_body_bytes:
        return limits.remember_max_body_bytes
    if size > limits.remember_image_max_body_bytes:  # too large either way: the 413 says the larger
        return limits.remember_image_max_body_bytes
    return (
        limits.remember_image_max_body_bytes if _carries_an_image(event) else limits.remember_max_body_bytes
    )


def _carries_an_image(event: dict) -> bool:
    try:
        body = json.loads(text_body(event).get("body") or "")
    except (BadRequest, ValueError, RecursionError):
        return False
    return isinstance(body, dict) and body.get("image") is not None and body.get("text") is None


# The operations that end with a monitoring event, and their body limits (from the request's event).
BODY_LIMITS: dict[str, Callable[[Limits, dict], int]] = {
    "remember": _remember_body_limit,
    "query": lambda limits, event: limits.query_max_body_bytes,
}


def create_handler(
    *routers: APIGatewayHttpRouter,
    operation: str | None = None,
    idempotent: bool = False,
    idempotent_method: str = "POST",
) -> LambdaHandler:
    """The handler of one function serving `routers`; `operation` names its monitoring events;
    `idempotent`: a request of `idempotent_method` with an Idempotency-Key runs once
    (api/idempotency.py)."""
    app = create_app(*routers, methods_elsewhere=_methods_elsewhere)
    resolve = _resolver(app)
    if idempotent:
        resolve = once_per_idempotency_key(resolve, operation or "request", idempotent_method)

    def handler(event: dict, context: Any) -> dict:
        # Every transaction of the request cuts its statements before the invocation ends: a 503
        # that releases its locks, instead of Lambda killing the invocation mid-transaction.
        with statements_end_before(invocation_deadline(context)):
            if operation is None:
                return _configured_then_served(resolve, event, context, None)
            report = RequestReport(operation, request_id=(event.get("requestContext") or {}).get("requestId"))
            with reporting(report):
                response = _configured_then_served(resolve, event, context, BODY_LIMITS[operation])
        report.emit(int(response.get("statusCode", 200)), _error_of(response))
        return response

    # remember and query call the model providers: their snapshot holds the SDKs and, with geo on,
    # the gazetteer. Every function reseeds `random` after a restore (its retries' jitter).
    preload = (import_provider_sdks, preload_geo) if operation is not None else ()
    entry = instrumented(handler, before_snapshot=preload, after_restore=(reseed_random,))
    entry.app = app  # type: ignore[attr-defined]
    return entry


def _configured_then_served(
    resolve: LambdaHandler, event: dict, context: Any, body_limit: Callable[[Limits, dict], int] | None
) -> dict:
    try:
        settings = memory().settings  # the container's configuration, read once
    except GbError as exc:
        return error_event(exc)
    # The size first: an oversized body is refused before anything (the jwt check included) reads it.
    max_body_bytes = body_limit(settings.limits, event) if body_limit else None
    if max_body_bytes is not None and body_size(event) > max_body_bytes:
        return error_event(PayloadTooLarge(f"request body is larger than {max_body_bytes} bytes"))
    try:
        event = authorized(event, settings.auth_mode)  # jwt: 401 without a user, 403 for another
    except GbError as exc:
        return error_event(exc)
    return _serve(resolve, event, context)


def _serve(resolve: LambdaHandler, event: dict, context: Any) -> dict:
    if event.get("rawPath") == OPENAPI_PATH:
        if _method(event) != "GET":
            refused = MethodNotAllowed(
                f"method {_method(event)} not allowed on {OPENAPI_PATH} (allowed: GET)"
            )
            return error_event(refused, headers={"Allow": "GET"})
        return _json_response(openapi_document(all_routers()))
    try:
        event = json_whatever_the_content_type(text_body(checked_parameters(event)))
    except BadRequest as exc:
        return error_event(exc)
    return resolve(event, context)


def _resolver(app) -> LambdaHandler:
    def resolve(event: dict, context: Any) -> dict:
        app.append_context(**invocation_context(event, context))
        return app.resolve(event, context)

    return resolve


def _method(event: dict) -> str:
    return ((event.get("requestContext") or {}).get("http") or {}).get("method", "")


def _json_response(body: dict) -> dict:
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def _error_of(response: dict) -> str | None:
    if int(response.get("statusCode", 200)) < 400:
        return None
    try:
        return str(json.loads(response.get("body") or "{}").get("error"))
    except (ValueError, AttributeError):
        return None


def _methods_elsewhere(path: str) -> PathMethods:
    """The methods any function of the API routes this path with."""
    return path_methods(list(_every_route()), path)


@functools.cache
def _every_route() -> tuple:
    every = create_app(*all_routers())
    return (*every._static_routes, *every._dynamic_routes)


__all__ = ["create_handler"]
