"""SnapStart's hooks, registered in one place: what is done before the snapshot is taken (so a
restored container has it for free) and what each restore redoes. Every function's entry registers
its hooks here once, where its handler is wrapped (observability/tracing.py, `instrumented`).

Outside Lambda's runtime (locally, in tests) SnapStart's module is missing and nothing is
registered; on a function without SnapStart the hooks are registered and never run."""

from __future__ import annotations

from collections.abc import Callable, Iterable

Hook = Callable[[], object]


def register_hooks(*, before_snapshot: Iterable[Hook] = (), after_restore: Iterable[Hook] = ()) -> None:
    """Register `before_snapshot` and `after_restore` hooks with the runtime, in order."""
    try:
        import snapshot_restore_py as runtime  # only in the Lambda runtime
    except ImportError:
        return
    for hook in before_snapshot:
        runtime.register_before_snapshot(hook)
    for hook in after_restore:
        runtime.register_after_restore(hook)
