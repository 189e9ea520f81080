"""One remember or query from start to end: its model calls, their inferences, and what it changed,
reported to the request's monitoring event whatever happens."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gligabao.memory.ports import Memory
from gligabao.memory.trajectory import NO_TRAJECTORY, NoTrajectory, TrajectoryRecorder
from gligabao.observability.inferences import CallContext, CallGuard, save_inferences
from gligabao.observability.logging import get_logger
from gligabao.observability.monitoring import current_report


@dataclass
class Operation:
    """What the memory layer reports about one call: its model calls and what it changed."""

    name: str  # 'remember' or 'query'
    call: CallContext
    dataset: str
    counts: dict[str, int] = field(default_factory=dict)
    trajectory: TrajectoryRecorder | NoTrajectory = NO_TRAJECTORY  # an eval call's (memory/trajectory.py)


@contextmanager
def operation(
    memory: Memory,
    name: str,
    *,
    user_id: str,
    dataset: str,
    session_id: str | None,
    request_id: str | None,
    guard: CallGuard | None = None,
) -> Iterator[Operation]:
    """Run one operation; its inferences are saved by the caller's transaction on success
    (`save_inferences` inside it) and here, in a transaction of their own, when it fails. `guard`:
    a queued job's (memory/job_guard.py)."""
    call = CallContext(user_id=user_id, type=name, session_id=session_id, request_id=request_id, guard=guard)
    op = Operation(name, call, dataset)
    report = current_report()
    if report is not None:
        report.user_id, report.dataset, report.session_id = user_id, dataset, session_id
        report.call, report.counts = op.call, op.counts
    try:
        yield op
    finally:
        _save_inferences_left(memory, op.call)  # normally none after a success: the transaction saved them


def _save_inferences_left(memory: Memory, call: CallContext) -> None:
    if call.saved == len(call.inferences):
        return
    try:
        with memory.database.transaction(call.user_id) as uow:
            save_inferences(uow.conn, call)
    except Exception:  # recording cost must never hide the request's own error
        get_logger().warning(
            "could not record inferences", extra={"count": len(call.inferences) - call.saved}
        )
