"""What a route receives through Powertools' `Depends()`: the container's bundle and what it reads
of the invocation. Tests override `memory` with `app.dependency_overrides`."""

from __future__ import annotations

import time
from dataclasses import dataclass

from aws_lambda_powertools.event_handler.request import Request

from gligabao import bootstrap

# Keys of the resolver context (`app.append_context`) the handler fills for every invocation.
REQUEST_ID = "gligabao_request_id"
DEADLINE = "gligabao_deadline"


def memory() -> bootstrap.Bundle:
    """The bundle of this container (the memory core's dependencies)."""
    return bootstrap.bundle()


@dataclass(frozen=True)
class Invocation:
    request_id: str | None
    deadline: float | None  # time.monotonic() instant the Lambda ends: provider calls must end before


def invocation(request: Request) -> Invocation:
    return Invocation(request.context.get(REQUEST_ID), request.context.get(DEADLINE))


def invocation_deadline(context: object) -> float | None:
    """The time.monotonic() instant the Lambda ends (locally: the local API's invocation timeout);
    None without a Lambda context (a test's direct call)."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return time.monotonic() + remaining() / 1000 if callable(remaining) else None


def invocation_context(event: dict, context: object) -> dict:
    """What the handler appends to the resolver context before routing."""
    request_id = (event.get("requestContext") or {}).get("requestId")
    return {REQUEST_ID: request_id, DEADLINE: invocation_deadline(context)}
