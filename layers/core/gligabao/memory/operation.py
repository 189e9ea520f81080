"""One remember or query from start to end: its model calls, their inferences, and the
monitoring event that closes it, whatever happens."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gligabao.db.connection import user_transaction
from gligabao.errors import GbError
from gligabao.observability.inferences import CallContext, save_inferences


@dataclass
class Operation:
    """What the memory layer reports about one call: its model calls and what it changed."""

    name: str  # 'remember' or 'query'
    call: CallContext
    dataset: str
    counts: dict[str, int] = field(default_factory=dict)


@contextmanager
def operation(
    name: str,
    *,
    user_id: str,
    dataset: str,
    session_id: str | None,
    request_id: str | None,
    eval_call: bool = False,
) -> Iterator[Operation]:
    """Run one operation; its inferences are saved by the caller's transaction on success
    (`save_inferences` inside it) and here in a transaction of their own on failure."""
    started = time.perf_counter()
    op = Operation(
        name,
        CallContext(user_id=user_id, type=name, session_id=session_id, request_id=request_id, eval=eval_call),
        dataset,
    )
    try:
        yield op
    except Exception as exc:
        _save_failed_call_inferences(op.call)
        status = exc.status if isinstance(exc, GbError) else 500
        _emit(
            op,
            f"{name}.error",
            started,
            status,
            error=exc.message if isinstance(exc, GbError) else "internal error",
        )
        raise
    _save_failed_call_inferences(op.call)  # normally nothing left: the transaction saved them
    _emit(op, f"{name}.ok", started, 200)


def _save_failed_call_inferences(call: CallContext) -> None:
    if call.saved == len(call.inferences):
        return
    try:
        with user_transaction(call.user_id) as conn:
            save_inferences(conn, call)
    except Exception:  # recording cost must never hide the request's own error
        from gligabao.observability.logging import get_logger

        get_logger().warning(
            "could not record inferences", extra={"count": len(call.inferences) - call.saved}
        )


def _emit(op: Operation, event: str, started: float, status: int, error: str | None = None) -> None:
    from gligabao.observability.monitoring import emit_event

    emit_event(
        event,
        request_id=op.call.request_id,
        user_id=op.call.user_id,
        dataset=op.dataset,
        session_id=op.call.session_id,
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        status=status,
        counts=op.counts,
        call=op.call,
        error=error,
    )
