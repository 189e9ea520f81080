"""Every function's entry: X-Ray through Powertools' Tracer, and the invocation's request id and
cold start on every log line of the invocation (observability/tracing.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from gligabao.observability import tracing
from gligabao.observability.logging import get_logger


class Context:
    function_name = "gligabao-query"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:gligabao-query"
    aws_request_id = "lambda-request-1"


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_every_log_line_of_an_invocation_carries_the_request_ids_and_cold_start(capsys):
    def handler(event, context):
        get_logger().info("inside")
        return {"statusCode": 200}

    entry = tracing.instrumented(handler)
    event = {"requestContext": {"requestId": "api-request-9"}}
    assert entry(event, Context()) == {"statusCode": 200}
    get_logger().info("after")

    inside, after = _lines(capsys.readouterr().out)
    assert inside["message"] == "inside"
    assert inside["function_request_id"] == "lambda-request-1"
    assert inside["correlation_id"] == "api-request-9"  # the API Gateway request id
    assert isinstance(inside["cold_start"], bool)
    assert not set(tracing.INVOCATION_KEYS) & set(after)


def test_the_handlers_are_traced_by_the_powertools_tracer_without_their_responses(monkeypatch):
    from aws_lambda_powertools import Tracer

    assert isinstance(tracing.tracer, Tracer)
    wrapped = []

    def capture(handler, capture_response=None):
        wrapped.append(capture_response)
        return handler

    monkeypatch.setattr(tracing.tracer, "capture_lambda_handler", capture)
    entry = tracing.instrumented(lambda event, context: {})
    entry({}, Context())
    entry({}, Context())

    assert wrapped == [False]  # once; responses hold the users' data: never in a trace


def test_the_tracer_and_its_sdk_are_made_on_first_use_not_at_import():
    """Building the Tracer imports the X-Ray SDK and its botocore patch: not a cold start's cost."""
    code = """
        import os, sys
        os.environ.update(LAMBDA_TASK_ROOT="/var/task", AWS_LAMBDA_FUNCTION_NAME="gligabao-query")
        from gligabao.observability import tracing
        tracing.instrumented(lambda event, context: {"statusCode": 200})
        before = "aws_xray_sdk" in sys.modules
        tracing.container_tracer()
        print(before, "aws_xray_sdk" in sys.modules, "aws_xray_sdk.ext.botocore.patch" in sys.modules)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    ).stdout.split()

    assert out == ["False", "True", "True"]


def test_under_snapstart_the_tracer_is_made_before_the_snapshot():
    code = """
        import os, sys, types
        os.environ.update(LAMBDA_TASK_ROOT="/var/task", AWS_LAMBDA_FUNCTION_NAME="gligabao-query")
        hooks = []
        runtime = types.ModuleType("snapshot_restore_py")
        runtime.register_before_snapshot = hooks.append
        sys.modules["snapshot_restore_py"] = runtime
        from gligabao.observability import tracing
        tracing.instrumented(lambda event, context: {"statusCode": 200})
        before = "aws_xray_sdk" in sys.modules
        for hook in hooks:
            hook()
        print(len(hooks), before, "aws_xray_sdk" in sys.modules)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    ).stdout.split()

    assert out == ["1", "False", "True"]


def test_every_function_s_entry_is_instrumented():
    from conftest import ROOT

    for app in sorted((ROOT / "functions").glob("*/app.py")):
        text = app.read_text()
        assert "create_handler(" in text or "create_worker(" in text or "capture_lambda_handler" in text, app
    handler_source = (ROOT / "layers/core/gligabao/api/handler.py").read_text()
    worker_source = (ROOT / "layers/core/gligabao/api/worker.py").read_text()
    assert "entry = instrumented(handler," in handler_source
    assert "return instrumented(handler, http=False," in worker_source


def test_a_call_without_a_lambda_context_is_the_handler_alone():
    calls = []
    entry = tracing.instrumented(lambda event, context: calls.append(context) or {"statusCode": 204})

    assert entry({}, None) == {"statusCode": 204}
    assert calls == [None]


def test_a_context_without_the_lambda_attributes_is_served_without_them():
    class Partial:
        aws_request_id = "r-1"

        def get_remaining_time_in_millis(self):
            return 1000

    entry = tracing.instrumented(
        lambda event, context: {"statusCode": 200, "left": context.get_remaining_time_in_millis()}
    )
    assert entry({}, Partial()) == {"statusCode": 200, "left": 1000}
