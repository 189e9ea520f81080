"""Monitoring events (SPEC section 11): one JSON log line and one EMF document per event, and
the logging safeguard that keeps provider keys and passwords out of every log line."""

from __future__ import annotations

import inspect
import json
import logging

import pytest

from gligabao.observability.inferences import CallContext, Inference
from gligabao.observability.logging import REDACTED, get_logger, redact, redact_text
from gligabao.observability.monitoring import RequestReport, emit_event, parse_event_name

ANTHROPIC_KEY = "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1JkLmNoPqRsTuVwXyZ_abc-123"
OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

EVENT_FIELDS = {
    "event",
    "request_id",
    "user_id",
    "dataset",
    "session_id",
    "duration_ms",
    "status",
    "counts",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "error",
}
# What Powertools Logger adds to every line by itself.
POWERTOOLS_FIELDS = {"level", "location", "message", "timestamp", "service", "sampling_rate", "xray_trace_id"}
METRIC_UNITS = {
    "Latency": "Milliseconds",
    "Errors": "Count",
    "ServerErrors": "Count",
    "ModelCalls": "Count",
    "ModelCallFailures": "Count",
    "InputTokens": "Count",
    "OutputTokens": "Count",
    "CostUSD": "None",
    "EntitiesCreated": "Count",
    "EdgesCreated": "Count",
    "EdgesSuperseded": "Count",
}


@pytest.fixture(autouse=True)
def _metrics_on(monkeypatch):
    # EMF output is switched off in Powertools dev mode or with POWERTOOLS_METRICS_DISABLED.
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)


def _lines(capsys) -> tuple[list[dict], list[dict]]:
    """(EMF documents, log lines) printed to stdout since the last capture; every line must be JSON."""
    out = capsys.readouterr().out
    docs = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [d for d in docs if "_aws" in d], [d for d in docs if "_aws" not in d]


def _call_with_two_inferences() -> CallContext:
    call = CallContext(user_id="alice", type="remember", session_id="s-1", request_id="req-1")
    call.record(
        Inference(
            stage="extract",
            model="claude-haiku-5-5",
            reasoning="none",
            input_tokens=1200,
            output_tokens=300,
            thinking_tokens=None,
            cost_usd=0.0024,
            duration_ms=800,
            ok=True,
        )
    )
    call.record(
        Inference(
            stage="embed",
            model="text-embedding-3-small",
            reasoning=None,
            input_tokens=80,
            output_tokens=None,
            thinking_tokens=None,
            cost_usd=0.0000016,
            duration_ms=90,
            ok=True,
        )
    )
    return call


def _metric_definitions(doc: dict) -> dict[str, str]:
    directive = doc["_aws"]["CloudWatchMetrics"][0]
    return {m["Name"]: m["Unit"] for m in directive["Metrics"]}


def _value(doc: dict, name: str) -> float:
    value = doc[name]
    if isinstance(value, list):  # Powertools writes each metric as a list of values
        assert len(value) == 1, f"{name} carries more than one value: {value}"
        value = value[0]
    return value


def test_remember_ok_event_emits_one_log_line_and_one_emf_document(capsys):
    capsys.readouterr()
    emit_event(
        "remember.ok",
        request_id="req-1",
        user_id="alice",
        dataset="default",
        session_id="s-1",
        duration_ms=1234.5,
        status=200,
        counts={"entities_created": 3, "edges_created": 2, "edges_superseded": 1},
        call=_call_with_two_inferences(),
    )
    emf, logs = _lines(capsys)
    assert len(emf) == 1 and len(logs) == 1

    doc = emf[0]
    directive = doc["_aws"]["CloudWatchMetrics"][0]
    assert len(doc["_aws"]["CloudWatchMetrics"]) == 1
    assert directive["Namespace"] == "gligabao"
    assert len(directive["Dimensions"]) == 1
    dimensions = directive["Dimensions"][0]
    assert "Operation" in dimensions
    # Powertools adds the service dimension; nothing else may ride along.
    assert set(dimensions) <= {"Operation", "service"}
    assert doc["Operation"] == "remember"
    if "service" in dimensions:
        assert doc["service"] == "gligabao"
    assert _metric_definitions(doc) == METRIC_UNITS
    assert _value(doc, "Latency") == 1234.5
    assert _value(doc, "Errors") == 0
    assert _value(doc, "ModelCalls") == 2 and _value(doc, "ModelCallFailures") == 0
    assert _value(doc, "InputTokens") == 1280
    assert _value(doc, "OutputTokens") == 300
    assert _value(doc, "CostUSD") == pytest.approx(0.0024016)
    assert _value(doc, "EntitiesCreated") == 3
    assert _value(doc, "EdgesCreated") == 2
    assert _value(doc, "EdgesSuperseded") == 1
    assert isinstance(doc["_aws"]["Timestamp"], int)

    line = logs[0]
    assert line["message"] == "remember.ok"
    assert line["level"] == "INFO"
    assert line["service"] == "gligabao"
    assert line["event"] == "remember.ok"
    assert line["request_id"] == "req-1"
    assert line["user_id"] == "alice"
    assert line["dataset"] == "default"
    assert line["session_id"] == "s-1"
    assert line["duration_ms"] == 1234.5
    assert line["status"] == 200
    assert line["counts"] == {"entities_created": 3, "edges_created": 2, "edges_superseded": 1}
    assert line["input_tokens"] == 1280
    assert line["output_tokens"] == 300
    assert line["cost_usd"] == pytest.approx(0.0024016)
    assert "error" not in line  # None fields are left out by Powertools
    # Only the event's own fields and the ones Powertools always writes: no text of any kind.
    assert set(line) <= EVENT_FIELDS | POWERTOOLS_FIELDS


def test_error_event_counts_one_error_and_zero_for_absent_counts(capsys):
    capsys.readouterr()
    emit_event(
        "query.error",
        request_id="req-2",
        user_id="bob",
        dataset="work",
        session_id=None,
        duration_ms=37,
        status=502,
        error="ProviderError: reply cut at max_tokens",
    )
    emf, logs = _lines(capsys)
    assert len(emf) == 1 and len(logs) == 1

    doc = emf[0]
    assert doc["Operation"] == "query"
    assert _metric_definitions(doc) == METRIC_UNITS
    assert _value(doc, "Errors") == 1
    assert _value(doc, "ServerErrors") == 1  # a provider failure (502) is what the error alarm counts
    assert _value(doc, "Latency") == 37
    for name in (
        "InputTokens",
        "OutputTokens",
        "CostUSD",
        "EntitiesCreated",
        "EdgesCreated",
        "EdgesSuperseded",
    ):
        assert _value(doc, name) == 0, name

    line = logs[0]
    assert line["message"] == "query.error"
    assert line["event"] == "query.error"
    assert line["level"] == "ERROR"
    assert line["user_id"] == "bob"
    assert line["status"] == 502
    assert line["error"] == "ProviderError: reply cut at max_tokens"
    assert line["counts"] == {}
    assert line["input_tokens"] == 0 and line["output_tokens"] == 0 and line["cost_usd"] == 0
    assert "session_id" not in line


def test_client_error_is_a_warning_and_still_counts_as_error(capsys):
    capsys.readouterr()
    emit_event(
        "remember.error",
        request_id="req-3",
        user_id="carol",
        dataset="default",
        session_id="s",
        duration_ms=2.0,
        status=400,
        error="BadRequest: text is empty",
    )
    emf, logs = _lines(capsys)
    assert logs[0]["level"] == "WARNING" and logs[0]["status"] == 400
    assert _value(emf[0], "Errors") == 1
    assert _value(emf[0], "ServerErrors") == 0  # a user's 4xx never wakes anyone
    assert emf[0]["Operation"] == "remember"


def test_dimensions_and_values_do_not_leak_between_events(capsys):
    capsys.readouterr()
    emit_event(
        "remember.ok",
        request_id="a",
        user_id="u",
        dataset="d",
        session_id=None,
        duration_ms=10,
        status=200,
        counts={"entities_created": 5},
        call=_call_with_two_inferences(),
    )
    emit_event(
        "query.ok", request_id="b", user_id="u", dataset="d", session_id=None, duration_ms=20, status=200
    )
    emit_event(
        "forget.ok", request_id="c", user_id="u", dataset="d", session_id=None, duration_ms=30, status=200
    )
    emf, logs = _lines(capsys)
    assert [d["Operation"] for d in emf] == ["remember", "query", "forget"]
    assert [line["event"] for line in logs] == ["remember.ok", "query.ok", "forget.ok"]
    first_dimensions = emf[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"]
    for doc in emf:
        assert doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == first_dimensions
    # Each document carries its own event only: one value per metric, nothing carried over.
    assert [_value(d, "Latency") for d in emf] == [10, 20, 30]
    assert [_value(d, "EntitiesCreated") for d in emf] == [5, 0, 0]
    assert [_value(d, "InputTokens") for d in emf] == [1280, 0, 0]


@pytest.mark.parametrize("name", ["remember", "remember.done", ".ok", "remember.ok.extra", "", "query error"])
def test_event_name_must_be_op_dot_ok_or_error(name, capsys):
    with pytest.raises(ValueError):
        emit_event(name, request_id="r", user_id="u", dataset="d", session_id=None, duration_ms=1, status=200)
    emf, logs = _lines(capsys)
    assert emf == [] and logs == []


def test_parse_event_name():
    assert parse_event_name("remember.ok") == ("remember", "ok")
    assert parse_event_name("query.error") == ("query", "error")
    assert parse_event_name("dataset_delete.ok") == ("dataset_delete", "ok")


def test_emit_event_takes_no_text():
    parameters = set(inspect.signature(emit_event).parameters)
    assert not parameters & {"text", "texts", "content", "query", "answer", "key", "api_key"}


# --- the redaction safeguard -------------------------------------------------------------------


def test_key_in_message_and_extra_field_never_printed(capsys):
    capsys.readouterr()
    log = get_logger()
    log.info(f"calling provider with {ANTHROPIC_KEY}")
    log.info("openai key %s in args", OPENAI_KEY)
    log.warning(
        "extra fields",
        extra={
            "detail": f"x-api-key: {ANTHROPIC_KEY}",
            "anthropic_api_key": ANTHROPIC_KEY,
            "headers": {"Authorization": f"Bearer {BEARER}"},
            "note": f"got header Authorization: Bearer {BEARER}",
            "nested": [{"value": OPENAI_KEY}],
            "password": "hunter2",
            "dsn": "postgresql://gb:s3cretpw@db.example.com:5432/gligabao",
        },
    )
    log.info({"message_as_dict": ANTHROPIC_KEY, "db_password": "hunter2"})
    out = capsys.readouterr().out
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, BEARER, "hunter2", "s3cretpw", "Zx9Qw8Er7Ty6"):
        assert secret not in out, secret
    lines = [json.loads(line) for line in out.splitlines()]  # still valid JSON lines
    assert len(lines) == 4
    assert lines[0]["message"] == f"calling provider with {REDACTED}"
    assert lines[1]["message"] == f"openai key {REDACTED} in args"
    extra = lines[2]
    assert extra["anthropic_api_key"] == REDACTED
    assert extra["password"] == REDACTED
    assert extra["headers"]["Authorization"] == REDACTED
    assert extra["nested"] == [{"value": REDACTED}]
    assert extra["dsn"] == f"postgresql://gb:{REDACTED}@db.example.com:5432/gligabao"
    assert REDACTED in extra["detail"] and REDACTED in extra["note"]
    assert lines[3]["message"]["db_password"] == REDACTED


def test_key_in_exception_and_child_logger_never_printed(capsys):
    capsys.readouterr()
    try:
        raise RuntimeError(f"401 invalid x-api-key {ANTHROPIC_KEY}")
    except RuntimeError:
        get_logger().exception("provider call failed")
    logging.getLogger("gligabao.ai.test_child").warning("child logger sees %s", OPENAI_KEY)
    out = capsys.readouterr().out
    assert ANTHROPIC_KEY not in out and OPENAI_KEY not in out
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["exception_name"] == "RuntimeError"
    assert REDACTED in lines[0]["exception"]
    assert lines[1]["message"] == f"child logger sees {REDACTED}"


def test_key_in_event_error_never_printed(capsys):
    capsys.readouterr()
    emit_event(
        "query.error",
        request_id="r",
        user_id="u",
        dataset="d",
        session_id=None,
        duration_ms=5,
        status=502,
        error=f"AuthenticationError: invalid key {ANTHROPIC_KEY}",
    )
    out = capsys.readouterr().out
    assert ANTHROPIC_KEY not in out
    (line,) = [json.loads(x) for x in out.splitlines() if "_aws" not in x]
    assert line["error"] == f"AuthenticationError: invalid key {REDACTED}"


def test_redaction_leaves_ordinary_text_alone():
    for text in (
        "risk-assessment-for-the-whole-project-plan",
        "task-0123456789abcdefghij",
        "input_tokens: 120 max_tokens=4096",
        "remember.ok",
        "secret not found: arn:aws:secretsmanager:us-east-1:123456789012:secret:gb-keys-AbCdEf",
    ):
        assert redact_text(text) == text
    assert redact({"input_tokens": 5, "output_tokens": 2, "secrets_arn": "arn:aws:x"}) == {
        "input_tokens": 5,
        "output_tokens": 2,
        "secrets_arn": "arn:aws:x",
    }


def test_redaction_is_idempotent():
    text = f"Authorization: Bearer {BEARER}; password=hunter2; key {ANTHROPIC_KEY}"
    once = redact_text(text)
    assert redact_text(once) == once
    assert "hunter2" not in once and BEARER not in once and ANTHROPIC_KEY not in once


def test_a_failed_model_call_is_counted_for_the_dashboard(capsys):
    capsys.readouterr()
    call = _call_with_two_inferences()
    call.inferences[0] = call.inferences[0].__class__(**{**call.inferences[0].__dict__, "ok": False})
    emit_event(
        "query.error",
        request_id="req-9",
        user_id="alice",
        dataset="default",
        session_id=None,
        duration_ms=5.0,
        status=502,
        call=call,
        error="ProviderError: overloaded",
    )
    emf, _ = _lines(capsys)
    assert (_value(emf[0], "ModelCalls"), _value(emf[0], "ModelCallFailures")) == (2, 1)


def test_a_report_without_its_own_call_still_counts_the_one_call_made_beside_it(capsys):
    # An asynchronous job that fails before its own operation starts, after preparing one text ahead.
    capsys.readouterr()
    report = RequestReport("remember_job", request_id="job-1", user_id="alice")
    report.more_calls.append(_call_with_two_inferences())
    report.emit(500, "internal error")
    emf, lines = _lines(capsys)
    assert (lines[0]["input_tokens"], lines[0]["output_tokens"]) == (1280, 300)
    assert _value(emf[0], "ModelCalls") == 2
