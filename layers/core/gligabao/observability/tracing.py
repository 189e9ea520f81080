"""Every function's entry: X-Ray tracing through Powertools' Tracer and, on every log line, the
invocation's request id, cold start and function (Logger.inject_lambda_context).

The Tracer is off outside Lambda (tests, the local API, `sam local`: Powertools checks the
environment) and then only calls the handler. Importing it imports the X-Ray SDK and botocore
(about 250 modules): under SnapStart that is in the snapshot.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Tracer
from aws_lambda_powertools.logging import correlation_paths

from gligabao.observability.logging import get_logger

tracer = Tracer()  # service from POWERTOOLS_SERVICE_NAME

LambdaHandler = Callable[[dict, Any], dict]

# What inject_lambda_context reads from the context.
LAMBDA_CONTEXT_ATTRIBUTES = ("function_name", "memory_limit_in_mb", "invoked_function_arn", "aws_request_id")

# The keys inject_lambda_context adds to every log line of an invocation.
INVOCATION_KEYS = [
    "cold_start",
    "function_name",
    "function_memory_size",
    "function_arn",
    "function_request_id",
    "correlation_id",
]


def instrumented(handler: LambdaHandler, *, http: bool = True) -> LambdaHandler:
    """`handler` traced (one X-Ray segment per invocation, the cold start annotated; responses are
    not captured: they hold the users' data) with the Lambda context on every log line; `http`:
    the API Gateway request id is the log lines' correlation id."""
    traced = tracer.capture_lambda_handler(handler, capture_response=False)
    logged = get_logger().inject_lambda_context(
        traced,
        log_event=False,  # events carry the users' texts (and the migrate function's pre-signed URL)
        correlation_id_path=correlation_paths.API_GATEWAY_HTTP if http else None,
    )

    @functools.wraps(handler)
    def entry(event: dict, context: Any) -> dict:
        if not all(hasattr(context, attribute) for attribute in LAMBDA_CONTEXT_ATTRIBUTES):
            return handler(event, context)  # a test's direct call, without a whole Lambda context
        try:
            return logged(event, context)
        finally:  # what is logged between invocations (a SnapStart hook) belongs to none of them
            get_logger().remove_keys(INVOCATION_KEYS)

    return entry
