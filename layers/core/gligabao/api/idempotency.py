"""Idempotent writes: the `Idempotency-Key` header, through Powertools' idempotency utility.

A request carrying the header runs once per user and key. Its retries (the same key, the same
user, the same method, path and JSON body) get the first response, status and body, with the
header `Idempotent-Replayed: true`, and run nothing: no model call, nothing stored. The key
reused with another body is a 409, and so is a retry while the first request still runs. Only
the responses a retry would get again are kept: 2xx, and 4xx but for those that depend on the
moment (401, 403, 408, 409, 429); a 5xx (a provider failed, a key is missing) is not kept, so a
retry runs again (Powertools deletes the record when the function raises). Records expire after
`limits.idempotency_ttl_seconds` (24 hours by default).

The records are scoped to the request's user, twice: the user is part of the hashed key, and the
store (`Bundle.idempotency_records`) reads and writes only that user's rows. A request whose body
names no valid user runs without idempotency: it is a 400 whatever happens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from gligabao.api.app import error_event
from gligabao.api.deps import memory
from gligabao.api.validation import check_user_id
from gligabao.errors import BadRequest, Conflict, GbError
from gligabao.observability.logging import get_logger
from gligabao.observability.monitoring import RequestReport, current_report

Resolve = Callable[[dict, Any], dict]

HEADER = "idempotency-key"
REPLAYED_HEADER = "Idempotent-Replayed"
# Client errors a retry may get differently: the caller's credentials, its timing or the state.
MOMENTARY_CLIENT_ERRORS = frozenset({401, 403, 408, 409, 429})
# Without a Lambda context (a direct call) an in-progress record is held this long at most: no
# invocation runs longer than Lambda's 15 minutes.
LONGEST_INVOCATION_MS = 15 * 60 * 1000
IN_PROGRESS_RETRY_AFTER_SECONDS = 2
# The header as the OpenAPI document describes it, on each route that honours it.
IDEMPOTENCY_KEY_DESCRIPTION = (
    "1 to 255 printable ASCII characters. A retry with the same key and body gets the first "
    "response (header Idempotent-Replayed: true) without running again; the key with another body, "
    "or while the first request runs, is 409. 5xx responses are not kept. Keys expire after "
    "GB_IDEMPOTENCY_TTL_SECONDS (default 24 hours)."
)

_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")


def once_per_idempotency_key(resolve: Resolve, operation: str, method: str = "POST") -> Resolve:
    """`resolve(event, context)` made idempotent for the requests of `method` (the function's
    writes: remember's POSTs, a correction's PATCH; their bodies name the user) that carry an
    Idempotency-Key."""

    def resolved(event: dict, context: Any) -> dict:
        if _method(event) != method:  # another method is the route's 405, key or not
            return resolve(event, context)
        try:
            key = idempotency_key(event, memory().limits.idempotency_key_max_chars)
        except BadRequest as exc:
            return error_event(exc)
        request = _keyed_request(event, key) if key is not None else None
        if request is None:
            return resolve(event, context)
        return _once(resolve, event, context, request, operation)

    return resolved


def _method(event: dict) -> str:
    return ((event.get("requestContext") or {}).get("http") or {}).get("method", "").upper()


def idempotency_key(event: dict, max_chars: int) -> str | None:
    """The header's value (its name in any case); None without it; 400 when it is not 1 to
    `max_chars` printable ASCII characters."""
    headers = event.get("headers") or {}
    value = next((value for name, value in headers.items() if name.lower() == HEADER), None)
    if value is None:
        return None
    if len(value) > max_chars or not _PRINTABLE_ASCII.fullmatch(value):
        raise BadRequest(f"Idempotency-Key must be 1 to {max_chars} printable ASCII characters")
    return value


def replayable(status: int) -> bool:
    """Whether a retry would get this response again."""
    return 200 <= status < 300 or (400 <= status < 500 and status not in MOMENTARY_CLIENT_ERRORS)


def _keyed_request(event: dict, key: str) -> dict | None:
    """What identifies the request (the user and the key) and what its retries must repeat (the
    method, path and JSON body); None when the body names no valid user."""
    try:
        body = json.loads(event.get("body") or "")
    except (ValueError, RecursionError):  # RecursionError: thousands of nested arrays (a 400 anyway)
        return None
    user_id = body.get("user_id") if isinstance(body, dict) else None
    if not isinstance(user_id, str) or not _valid_user(user_id):
        return None
    http = (event.get("requestContext") or {}).get("http") or {}
    return {
        "user_id": user_id,
        "idempotency_key": key,
        "request": {"method": http.get("method"), "path": event.get("rawPath"), "body": body},
    }


def _valid_user(user_id: str) -> bool:
    try:
        check_user_id(user_id)
        user_id.encode("utf-8")  # an unpaired surrogate is no user PostgreSQL can store
    except (ValueError, UnicodeEncodeError):
        return False
    return True


class _NotReplayable(Exception):
    """The function's response may not be replayed: Powertools deletes the record on it."""


def _once(resolve: Resolve, event: dict, context: Any, request: dict, operation: str) -> dict:
    # Imported on the first keyed request: the package imports boto3 (its DynamoDB layer), which
    # a cold start of a request without the header need not pay for.
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyInconsistentStateError,
        IdempotencyPersistenceLayerError,
        IdempotencyValidationError,
    )

    deps = memory()
    user_id = request["user_id"]
    ran: list[dict] = []

    def respond(request: dict) -> dict:
        response = resolve(event, context)
        ran.append(response)
        if not replayable(int(response.get("statusCode", 200))):
            raise _NotReplayable
        return response

    config = IdempotencyConfig(
        event_key_jmespath="[user_id, idempotency_key]",
        payload_validation_jmespath="request",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=deps.limits.idempotency_ttl_seconds,
        hash_function="sha256",
        # An in-progress record is held until the invocation's time is over.
        lambda_context=context
        if callable(getattr(context, "get_remaining_time_in_millis", None))
        else _LongestInvocation(),
        response_hook=lambda response, record: _replayed(response, user_id),
    )
    once = idempotent_function(
        respond,
        data_keyword_argument="request",
        persistence_store=deps.idempotency_records(user_id),
        config=config,
        key_prefix=operation,
    )
    try:
        return once(request=request)
    except _NotReplayable:
        return ran[0]
    except IdempotencyValidationError:
        _note_user(user_id)
        return error_event(Conflict("Idempotency-Key was already used with another request body"))
    except (IdempotencyAlreadyInProgressError, IdempotencyInconsistentStateError):
        _note_user(user_id)
        response = error_event(
            Conflict("a request with this Idempotency-Key is still in progress: retry it later")
        )
        response["headers"]["Retry-After"] = str(IN_PROGRESS_RETRY_AFTER_SECONDS)
        return response
    except IdempotencyPersistenceLayerError as exc:
        cause = exc.__cause__
        get_logger().warning(
            "idempotency records unavailable",
            extra={"reason": type(cause).__name__, "after_the_request_ran": bool(ran)},
        )
        if ran:  # the work is done (or refused): its response, though a retry may run it again
            return ran[0]
        return error_event(cause if isinstance(cause, GbError) else _Unavailable())


def _replayed(response: dict, user_id: str) -> dict:
    """The first response, as a retry gets it; the retry's monitoring event says it was replayed."""
    report = _note_user(user_id)
    if report is not None:
        report.counts["replayed"] = 1
    return {**response, "headers": {**(response.get("headers") or {}), REPLAYED_HEADER: "true"}}


def _note_user(user_id: str) -> RequestReport | None:
    """The monitoring event of a request the memory core never saw still names its user."""
    report = current_report()
    if report is not None:
        report.user_id = user_id
    return report


class _Unavailable(GbError):
    status = 503

    def __init__(self) -> None:
        super().__init__("idempotency records unavailable: retry later")


class _LongestInvocation:
    """A stand-in for the Lambda context of a direct call (tests, scripts)."""

    def get_remaining_time_in_millis(self) -> int:
        return LONGEST_INVOCATION_MS


__all__ = ["idempotency_key", "once_per_idempotency_key", "replayable"]
