"""Monitoring events: each remember and query ends with exactly one (SPEC section 11).

`emit_event("remember.ok", ...)` writes two lines to stdout:

* one JSON log line through the service's Powertools Logger (message = the event name;
  fields event, request_id, user_id, dataset, session_id, duration_ms, status, counts,
  input_tokens, output_tokens, cost_usd, error; Powertools omits the fields that are None);
* one CloudWatch EMF document (namespace `gligabao`, dimension `Operation` = the part of the
  name before the dot, plus Powertools' `service` dimension) with the metrics Latency,
  Errors, InputTokens, OutputTokens, CostUSD, EntitiesCreated, EdgesCreated, EdgesSuperseded,
  ServerErrors (the 5xx only: a provider failure, the database down; never a user's 4xx),
  which the template's error alarm sums, ModelCalls and ModelCallFailures (the dashboard's).

On the local console (`gligabao serve` without `--log-format json`: logging.use_console_lines) an
event is neither: its figures go to its request's one line (local/server.py), or to a line of its
own outside a request (a queued job's).

Each event uses a fresh `EphemeralMetrics`, flushed at once, so dimensions and metrics never
leak from one event (or one request) to the next. The function takes no text: memory texts
and keys cannot reach the logs through it (and the logger redacts key-like strings anyway).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from gligabao.observability.inferences import CallContext
from gligabao.observability.logging import console_lines, get_logger, log_console_line, service_name

NAMESPACE = "gligabao"
DIMENSION = "Operation"
OUTCOMES = ("ok", "error")
# counts key -> metric name (0 when the key is absent)
COUNT_METRICS = {
    "entities_created": "EntitiesCreated",
    "edges_created": "EdgesCreated",
    "edges_superseded": "EdgesSuperseded",
}
ERROR_MAX_CHARS = 500
# What the local console shows of the counts when present, in this order: key, singular, plural.
CONSOLE_FIGURES = (
    ("texts_stored", "text", "texts"),
    ("entities_created", "new entity", "new entities"),
    ("edges_created", "new edge", "new edges"),
    ("evidence_entities", "entity", "entities"),
    ("evidence_edges", "edge", "edges"),
    ("evidence_passages", "passage", "passages"),
)

_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_\-]*)\.(ok|error)$")


def parse_event_name(name: str) -> tuple[str, str]:
    """`"remember.ok"` -> `("remember", "ok")`; ValueError for a name that is not `<op>.<ok|error>`."""
    match = _NAME.match(name or "")
    if not match:
        raise ValueError(f"monitoring event name must be '<op>.ok' or '<op>.error', got {name!r}")
    return match.group(1), match.group(2)


def emit_event(
    name: str,
    *,
    request_id: str | None,
    user_id: str | None,
    dataset: str | int | None,
    session_id: str | None,
    duration_ms: float,
    status: int,
    counts: Mapping[str, int] | None = None,
    call: CallContext | None = None,
    error: str | None = None,
) -> None:
    """Emit the one monitoring event of a request: a JSON log line and an EMF metrics document.

    `name` is `<op>.ok` or `<op>.error` (remember.ok, remember.error, query.ok, query.error, ...).
    `counts` holds integer counters (entities_created, edges_created, edges_superseded, ...);
    `call` gives the tokens and cost of the request's model calls; `error` is a short error
    message (never a memory text). Monitoring never fails the request: a metrics problem is
    logged as a warning.
    """
    op, outcome = parse_event_name(name)
    is_error = outcome == "error"
    counts_out = {str(k): int(v) for k, v in (counts or {}).items() if v is not None}
    input_tokens = int(call.input_tokens) if call is not None else 0
    output_tokens = int(call.output_tokens) if call is not None else 0
    cost_usd = call.cost_usd if call is not None else 0.0  # None: a call had no price (docs/cost.md)
    model_calls = len(call.inferences) if call is not None else 0
    model_call_failures = sum(1 for i in call.inferences if not i.ok) if call is not None else 0
    duration = round(float(duration_ms), 3)
    if error is not None and len(error) > ERROR_MAX_CHARS:
        error = error[: ERROR_MAX_CHARS - 1] + "…"

    if console_lines():
        _to_console(
            ConsoleEvent(
                name, int(status), duration, _figures(counts_out, input_tokens + output_tokens), error
            )
        )
        return
    log = get_logger()
    fields = {
        "event": name,
        "request_id": request_id,
        "user_id": user_id,
        "dataset": dataset,
        "session_id": session_id,
        "duration_ms": duration,
        "status": int(status),
        "counts": counts_out,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": cost_usd,
        "error": error,
    }
    if not is_error:
        log.info(name, extra=fields)
    elif int(status) >= 500:
        log.error(name, extra=fields)
    else:
        log.warning(name, extra=fields)

    try:
        metrics = EphemeralMetrics(namespace=NAMESPACE, service=service_name())
        metrics.add_dimension(name=DIMENSION, value=op)
        metrics.add_metric(name="Latency", unit=MetricUnit.Milliseconds, value=duration)
        metrics.add_metric(name="Errors", unit=MetricUnit.Count, value=1 if is_error else 0)
        metrics.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1 if int(status) >= 500 else 0)
        metrics.add_metric(name="ModelCalls", unit=MetricUnit.Count, value=model_calls)
        metrics.add_metric(name="ModelCallFailures", unit=MetricUnit.Count, value=model_call_failures)
        metrics.add_metric(name="InputTokens", unit=MetricUnit.Count, value=input_tokens)
        metrics.add_metric(name="OutputTokens", unit=MetricUnit.Count, value=output_tokens)
        if cost_usd is not None:  # an unknown cost is no data point, never a 0
            metrics.add_metric(name="CostUSD", unit=MetricUnit.NoUnit, value=cost_usd)
        for key, metric in COUNT_METRICS.items():
            metrics.add_metric(name=metric, unit=MetricUnit.Count, value=counts_out.get(key, 0))
        if request_id:
            metrics.add_metadata(key="request_id", value=request_id)
        metrics.flush_metrics()
    except Exception as exc:
        log.warning("monitoring metrics not emitted", extra={"event": name, "reason": type(exc).__name__})


# --- the local console --------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsoleEvent:
    """What the local console shows of a monitoring event: counts and tokens, never a text."""

    name: str
    status: int
    duration_ms: float
    figures: str  # "2 new entities, 1 new edge, 349 tokens"
    error: str | None = None

    def details(self) -> str:
        """What follows a line's status and duration: ": " and the figures and error, else ""."""
        said = ", ".join(part for part in (self.figures, self.error) if part)
        return f": {said}" if said else ""

    def line(self) -> str:
        return f"{self.name} {self.status} {self.duration_ms:.0f} ms{self.details()}"


_collected: ContextVar[list[ConsoleEvent] | None] = ContextVar("gligabao_console_events", default=None)


@contextmanager
def collecting_console_events() -> Iterator[list[ConsoleEvent]]:
    """The console events emitted in this block, for the request line of the local API to show
    (local/containers.py runs each invocation in one); outside one, each event has a line."""
    events: list[ConsoleEvent] = []
    token = _collected.set(events)
    try:
        yield events
    finally:
        _collected.reset(token)


def _to_console(event: ConsoleEvent) -> None:
    collected = _collected.get()
    if collected is not None:
        collected.append(event)
    else:
        log_console_line(event.line())


def _figures(counts: Mapping[str, int], tokens: int) -> str:
    shown = [
        f"{counts[key]} {one if counts[key] == 1 else many}"
        for key, one, many in CONSOLE_FIGURES
        if key in counts
    ]
    if counts.get("edges_superseded"):
        shown.append(f"{counts['edges_superseded']} superseded")
    if counts.get("replayed"):
        shown.append("replayed")
    if tokens:
        shown.append(f"{tokens} tokens")
    return ", ".join(shown)


# --- the one event of a request -----------------------------------------------------------------


@dataclass
class RequestReport:
    """What a request's monitoring event says: the API layer opens it for every remember and
    query, whatever its outcome (400s included); the memory core fills in what it learns."""

    operation: str  # 'remember' or 'query'
    request_id: str | None = None
    user_id: str | None = None
    dataset: str | None = None
    session_id: str | None = None
    call: CallContext | None = None
    counts: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    more_calls: list[CallContext] = field(default_factory=list)  # made beside it (texts prepared ahead)

    def emit(self, status: int, error: str | None = None) -> None:
        calls = [c for c in (self.call, *self.more_calls) if c is not None]
        emit_event(
            f"{self.operation}.{'ok' if status < 400 else 'error'}",
            request_id=self.request_id,
            user_id=self.user_id,
            dataset=self.dataset,
            session_id=self.session_id,
            duration_ms=round((time.perf_counter() - self.started) * 1000, 3),
            status=status,
            counts=self.counts,
            call=_together(calls) if len(calls) > 1 else next(iter(calls), None),
            error=error,
        )


def _together(calls: list[CallContext]) -> CallContext:
    """One context holding the model calls of several, for their tokens and cost in one event."""
    first = calls[0]
    return CallContext(
        user_id=first.user_id, type=first.type, inferences=[i for call in calls for i in call.inferences]
    )


_current_report: ContextVar[RequestReport | None] = ContextVar("gligabao_request_report", default=None)


@contextmanager
def reporting(report: RequestReport) -> Iterator[RequestReport]:
    """Make `report` the current request's, for the memory core to fill in."""
    token = _current_report.set(report)
    try:
        yield report
    finally:
        _current_report.reset(token)


def current_report() -> RequestReport | None:
    """The report of the request being served, or None outside one (a direct call, a benchmark)."""
    return _current_report.get()
