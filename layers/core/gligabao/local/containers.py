"""Where the local API runs a function's handler: as warm Lambda containers.

`ContainerPools` (`gligabao serve --workers N`): each function gets up to N worker processes,
started on demand (a cold start) and kept (warm): each process loads its function's handler
once, builds its own bundle and keeps its database connection across invocations, as a Lambda
container does; it runs one invocation at a time (Powertools keeps the current event on a class
attribute, so one process cannot run two). An invocation goes to the function's most recently
used idle worker, as Lambda reuses the warmest container, else a new worker while the function
has fewer than N, else it waits for one. Invocations on different workers run concurrently.

`InProcessContainer` (`--workers 0`, and the tests, which install their bundle in their own
process): every invocation on one long-lived thread of this process, so its database connection
(one per thread) stays open across requests too; one invocation at a time.

A worker that outlives its invocation's timeout is stopped (as Lambda stops a container at its
timeout) and its request answered 500, as API Gateway answers a failed function.

On the local console (logging.use_console_lines, which the workers follow when the server does),
an invocation may collect its monitoring events (`console_events`) for its request's line.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gligabao.limits import LOCAL_API_DEFAULT_WORKERS
from gligabao.local.job_queue_link import JobQueueLink, connect_job_queue
from gligabao.observability.logging import console_lines, get_logger
from gligabao.observability.monitoring import ConsoleEvent, collecting_console_events

API_TIMEOUT_MS = 30_000  # API Gateway's integration timeout: the API functions' longest invocation
DEFAULT_WORKERS = LOCAL_API_DEFAULT_WORKERS
TIMEOUT_GRACE_SECONDS = 5.0  # beyond the invocation's timeout, before its worker is stopped
INIT_TIMEOUT_SECONDS = 120.0  # a worker's init (imports) on a busy machine; Lambda's is 10 s


@dataclass(frozen=True)
class FunctionCode:
    """A function of the template: its name (logical id), code directory and handler."""

    function: str
    code_uri: Path
    handler: str  # module.function, e.g. app.handler


class LambdaContext:
    """What a handler reads from the Lambda context."""

    def __init__(self, function_name: str, request_id: str, timeout_ms: int = API_TIMEOUT_MS):
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.aws_request_id = request_id
        self.memory_limit_in_mb = 1024
        self.invoked_function_arn = f"arn:aws:lambda:local:000000000000:function:{function_name}"
        self._deadline = time.monotonic() + timeout_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class Containers(Protocol):
    """Runs a function's handler on an event, as Lambda would (the result, or FunctionFailed);
    `console_events`, when given, gets the invocation's monitoring events (on the local console)."""

    def invoke(
        self,
        code: FunctionCode,
        event: dict,
        request_id: str,
        timeout_ms: int,
        console_events: list[ConsoleEvent] | None = None,
    ) -> Any: ...

    def close(self) -> None: ...


class FunctionFailed(Exception):
    """The function raised, crashed or timed out: API Gateway answers 500."""


class InProcessContainer:
    """Every function's handler in this process, on one long-lived thread."""

    def __init__(self, load: Callable[[FunctionCode], Callable]):
        self._load = load
        self._handlers: dict[FunctionCode, Callable] = {}
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gligabao-container")

    def invoke(
        self,
        code: FunctionCode,
        event: dict,
        request_id: str,
        timeout_ms: int,
        console_events: list[ConsoleEvent] | None = None,
    ) -> Any:
        context = LambdaContext(code.function, request_id, timeout_ms)
        return self._thread.submit(self._run, code, event, context, console_events).result()

    def _run(self, code: FunctionCode, event: dict, context: Any, console_events: list | None) -> Any:
        if code not in self._handlers:
            self._handlers[code] = self._load(code)
        return _invoked(self._handlers[code], event, context, console_events)

    def close(self) -> None:
        self._thread.shutdown(wait=False)


class _Worker:
    """One worker process of a function and the parent's end of its pipe."""

    def __init__(self, context, code: FunctionCode, startup: dict):
        self.conn, child_conn = context.Pipe()
        self.process = context.Process(
            target=_worker_main,
            args=(child_conn, code, startup),
            name=f"gligabao-{code.function}",
            daemon=True,
        )
        self.process.start()
        child_conn.close()
        self.ready = False

    def call(self, message: tuple, timeout_s: float) -> tuple[Any, list[ConsoleEvent]]:
        if not self.ready:  # its init (imports, the handler's module) is not the invocation's time
            if not self.conn.poll(INIT_TIMEOUT_SECONDS):
                raise TimeoutError
            self.conn.recv()  # EOFError when the process died
            self.ready = True
        self.conn.send(message)
        if not self.conn.poll(timeout_s):
            raise TimeoutError
        ok, value, console_events = self.conn.recv()  # EOFError when the process died
        if not ok:
            raise FunctionFailed(value)
        return value, console_events

    def stop(self) -> None:
        self.ask_to_stop()
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=2)
        self.conn.close()

    def ask_to_stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass


class _Pool:
    """The workers of one function: idle ones last-used first, at most `size`."""

    def __init__(self, size: int):
        self.size = size
        self.idle: list[_Worker] = []
        self.count = 0
        self.changed = threading.Condition()


class ContainerPools:
    """Up to `size` worker processes per function, each a warm container."""

    def __init__(
        self,
        size: int,
        *,
        settings_dump: dict | None = None,
        setup: Callable[[], None] | None = None,
    ):
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self._context = multiprocessing.get_context("spawn")  # no fork of a threaded server
        # The workers log as this process does (JSON, or the console's lines).
        self._startup: dict = {
            "settings": settings_dump,
            "setup": setup,
            "jobs": None,
            "console": console_lines(),
        }
        self._pools: dict[FunctionCode, _Pool] = {}
        self._lock = threading.Lock()
        self._link: JobQueueLink | None = None
        self._closed = False

    def share_job_queue(self, queue) -> None:
        """The workers' asynchronous remembers go to `queue`, in this process (the local queue)."""
        self._link = JobQueueLink(queue)
        self._startup = {**self._startup, "jobs": self._link.address_and_key}

    def invoke(
        self,
        code: FunctionCode,
        event: dict,
        request_id: str,
        timeout_ms: int,
        console_events: list[ConsoleEvent] | None = None,
    ) -> Any:
        pool = self._pool(code)
        worker = self._acquire(code, pool)
        healthy = False
        try:
            message = (event, request_id, timeout_ms, console_events is not None)
            value, events = worker.call(message, timeout_ms / 1000 + TIMEOUT_GRACE_SECONDS)
            healthy = True
            if console_events is not None:
                console_events.extend(events)
            return value
        except FunctionFailed:
            healthy = True  # the handler raised; its process is fine
            raise
        except TimeoutError:
            get_logger().error(
                f"local API: {code.function} ran past its timeout; its worker is stopped",
                extra={"function": code.function, "timeout_ms": timeout_ms},
            )
            raise FunctionFailed("timed out") from None
        except (EOFError, OSError):
            get_logger().error(
                f"local API: a worker of {code.function} died", extra={"function": code.function}
            )
            raise FunctionFailed("worker died") from None
        finally:
            self._release(pool, worker, healthy)

    def workers(self, code: FunctionCode) -> int:
        """How many workers `code` has now (started and not stopped)."""
        return self._pool(code).count

    def _pool(self, code: FunctionCode) -> _Pool:
        with self._lock:
            if code not in self._pools:
                self._pools[code] = _Pool(self.size)
            return self._pools[code]

    def _acquire(self, code: FunctionCode, pool: _Pool) -> _Worker:
        with pool.changed:
            while True:
                if self._closed:
                    raise FunctionFailed("the local API is stopping")
                if pool.idle:
                    return pool.idle.pop()  # the most recently used: the warmest
                if pool.count < pool.size:
                    pool.count += 1
                    break
                pool.changed.wait()
        try:
            return _Worker(self._context, code, self._startup)
        except BaseException:
            with pool.changed:
                pool.count -= 1
                pool.changed.notify()
            raise

    def _release(self, pool: _Pool, worker: _Worker, healthy: bool) -> None:
        if not healthy or self._closed:
            worker.stop()
        with pool.changed:
            if healthy and not self._closed:
                pool.idle.append(worker)
            else:
                pool.count -= 1
            pool.changed.notify()

    def close(self) -> None:
        self._closed = True
        with self._lock:
            pools = list(self._pools.values())
        stopping = []
        for pool in pools:
            with pool.changed:
                idle, pool.idle = pool.idle, []
                pool.count -= len(idle)
                pool.changed.notify_all()
            stopping += idle
        for worker in stopping:  # all at once, then each waited for
            worker.ask_to_stop()
        for worker in stopping:
            worker.stop()
        if self._link is not None:
            self._link.close()


def as_handler(containers: Containers, code: FunctionCode) -> Callable[[dict, Any], Any]:
    """A handler(event, context) that runs `code` in `containers` (the local job queue's worker)."""

    def handler(event: dict, context: Any) -> Any:
        return containers.invoke(code, event, context.aws_request_id, context.get_remaining_time_in_millis())

    return handler


def load_handler(code: FunctionCode) -> Callable:
    """Import a function's handler module from its code directory, as the Lambda runtime does."""
    import importlib.util
    import sys

    module_name, function_name = code.handler.rsplit(".", 1)
    source = code.code_uri / f"{module_name.replace('.', '/')}.py"
    spec = importlib.util.spec_from_file_location(f"gligabao_function_{code.function}", source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, function_name)


def _invoked(handler: Callable, event: dict, context: Any, console_events: list | None) -> Any:
    """The handler's result; its monitoring events into `console_events` when given."""
    if console_events is None:
        return handler(event, context)
    with collecting_console_events() as events:
        try:
            return handler(event, context)
        finally:
            console_events.extend(events)


def _worker_main(conn, code: FunctionCode, startup: dict) -> None:
    """A worker process: configure the container (the server's settings, its job queue, its
    console), load the handler once, then run invocations until told to stop."""
    from gligabao import bootstrap
    from gligabao.ai.snapstart import import_provider_sdks
    from gligabao.observability.logging import use_console_lines

    # A terminal's Ctrl-C reaches the whole process group: the server stops, and stops its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if startup["console"]:
        use_console_lines()
    if startup["setup"] is not None:
        startup["setup"]()
    if startup["settings"] is not None:
        from gligabao.settings import Settings

        bootstrap.install(bootstrap.Bundle(Settings.model_validate(startup["settings"])))
    if startup["jobs"] is not None:
        bootstrap.bundle().use_job_queue(connect_job_queue(*startup["jobs"]))
    try:
        handler = load_handler(code)  # the Lambda init: before the first invocation, not in it
        # The provider SDKs too, as SnapStart restores the functions that call models: a first
        # invocation does not pay their import (seconds on a busy machine).
        import_provider_sdks()
    except Exception:
        get_logger().exception(f"local API: {code.function} failed to load")
        return
    conn.send("ready")
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        event, request_id, timeout_ms, collect = message
        console_events: list[ConsoleEvent] | None = [] if collect else None
        try:
            result = _invoked(
                handler, event, LambdaContext(code.function, request_id, timeout_ms), console_events
            )
        except Exception as error:  # the function failed: logged here, a 500 there
            get_logger().exception(f"local API: {code.function} raised")
            reply = (False, type(error).__name__, [])
        else:
            reply = (True, result, console_events or [])
        try:
            conn.send(reply)
        except (OSError, ValueError):  # the server is gone, or the result does not pickle
            get_logger().exception(f"local API: a worker of {code.function} could not answer")
            return
