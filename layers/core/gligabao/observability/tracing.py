"""Every function's entry: X-Ray tracing through Powertools' Tracer and, on every log line, the
invocation's request id, cold start and function (Logger.inject_lambda_context).

The Tracer is off outside Lambda (tests, the local API, `sam local`: Powertools checks the
environment) and then only calls the handler. It is made at the first invocation, not at import:
building it imports the X-Ray SDK and its patch of botocore (about 250 modules, 100-250 ms of a
cold start's import otherwise). Under SnapStart it is made before the snapshot is taken instead,
so a restored container has it for free. Only botocore is patched (the AWS calls: Secrets
Manager, SQS, Location): the model providers' HTTP client is not one the SDK knows, and Lambda's
active tracing records the invocation itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.logging import correlation_paths

from gligabao.observability.logging import get_logger
from gligabao.snapstart import Hook, register_hooks

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

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

# The libraries whose calls become subsegments.
PATCHED_MODULES = ("botocore",)


@functools.cache
def container_tracer() -> Tracer:
    """The container's Tracer (service from POWERTOOLS_SERVICE_NAME), made once, on first use."""
    from aws_lambda_powertools import Tracer

    return Tracer(patch_modules=PATCHED_MODULES)


def __getattr__(name: str) -> Any:
    if name == "tracer":  # `tracing.tracer`: the container's Tracer, made on first use
        return container_tracer()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def instrumented(
    handler: LambdaHandler,
    *,
    http: bool = True,
    before_snapshot: Sequence[Hook] = (),
    after_restore: Sequence[Hook] = (),
) -> LambdaHandler:
    """`handler` traced (one X-Ray segment per invocation, the cold start annotated; responses are
    not captured: they hold the users' data) with the Lambda context on every log line; `http`:
    the API Gateway request id is the log lines' correlation id. The function's SnapStart hooks
    are registered here, once: the Tracer's, then `before_snapshot`, and `after_restore`."""

    @functools.cache
    def traced() -> LambdaHandler:
        return container_tracer().capture_lambda_handler(handler, capture_response=False)

    def traced_call(event: dict, context: Any) -> dict:
        return traced()(event, context)

    logged = get_logger().inject_lambda_context(
        traced_call,
        log_event=False,  # events carry the users' texts (and the migrate function's pre-signed URL)
        correlation_id_path=correlation_paths.API_GATEWAY_HTTP if http else None,
    )
    register_hooks(before_snapshot=(traced, *before_snapshot), after_restore=after_restore)

    @functools.wraps(handler)
    def entry(event: dict, context: Any) -> dict:
        if not all(hasattr(context, attribute) for attribute in LAMBDA_CONTEXT_ATTRIBUTES):
            return handler(event, context)  # a test's direct call, without a whole Lambda context
        try:
            return logged(event, context)
        finally:  # what is logged between invocations (a SnapStart hook) belongs to none of them
            get_logger().remove_keys(INVOCATION_KEYS)

    return entry
