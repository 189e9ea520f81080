"""What a route reads of the Lambda invocation it serves."""

from __future__ import annotations

import time

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter


def request_id(router: APIGatewayHttpRouter) -> str | None:
    event = router.current_event
    return event.request_context.request_id if event is not None else None


def deadline(router: APIGatewayHttpRouter) -> float | None:
    """The Lambda's end as a time.monotonic() instant: provider calls must end before it."""
    remaining = getattr(getattr(router, "lambda_context", None), "get_remaining_time_in_millis", None)
    return time.monotonic() + remaining() / 1000 if callable(remaining) else None
