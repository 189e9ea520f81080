"""What the provider calls decided about time, recorded as the code computed it, so that tests
assert the timeouts, deadlines and waits themselves rather than how long a call took on the
machine running them (gligabao.ai.retries, gligabao.ai.transport):

    log = AttemptLog(monkeypatch)
    ...  # calls through the real SDKs, to the fake servers
    log.made()          # each attempt made: the call's deadline, its timeout (the SDK's), its own deadline
    log.not_made        # the attempts the policy refused (too little time left)
    log.ops_of(attempt) # each socket operation of that attempt: the SDK's timeout, and the transport's
    log.waits           # each wait scheduled before a retry (still slept: the calls run as they would)
    log.clear()         # forget what was recorded so far

Every instant is a `time.monotonic()` value. Recording is thread-safe: a remember's chunks are
extracted concurrently."""

from __future__ import annotations

import itertools
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Attempt:
    call_deadline: float | None  # what the call must end before (None: no deadline)
    asked_at: float  # the instant the policy chose the attempt's timeout at
    timeout: float | None  # the attempt's timeout, given to the SDK; None: the attempt was not made
    ends_by: float | None  # the attempt's own deadline, which bounds each of its socket operations
    # which attempt it is: two attempts of one call made at once (a stage's concurrent calls) share
    # their deadline, so their socket operations are told apart by it, not by the deadline
    number: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SocketOp:
    attempt_deadline: float | None  # the deadline of the attempt it belongs to (None: outside one)
    attempt_number: int | None  # the attempt it belongs to (Attempt.number; None: outside one)
    before: float  # read just before the transport bounded it
    asked: float | None  # the SDK's (httpx's) timeout for this one operation
    given: float | None  # what the transport let it wait; None: refused, the attempt's time was up

    def ends_by(self) -> float | None:
        """The latest the operation could end at (None: unbounded)."""
        return None if self.given is None else self.before + self.given


class AttemptLog:
    def __init__(self, monkeypatch) -> None:
        from gligabao.ai import retries, transport

        self.attempts: list[Attempt] = []
        self.socket_ops: list[SocketOp] = []
        self.waits: list[float] = []
        lock = threading.Lock()
        chosen = threading.local()  # the timeout chosen, until its attempt starts (same thread)
        numbers = itertools.count(1)
        current: ContextVar[int | None] = ContextVar("attempt_log_current_attempt", default=None)

        policy_timeout = retries.RetryPolicy.attempt_timeout
        real_attempt_deadline = retries.attempt_deadline
        real_bounded = transport._bounded

        def attempt_timeout(policy, deadline, now):
            timeout = policy_timeout(policy, deadline, now)
            if timeout is None:
                with lock:
                    self.attempts.append(Attempt(deadline, now, None, None))
            else:
                chosen.value = (deadline, now, timeout)
            return timeout

        @contextmanager
        def attempt_deadline(instant):
            deadline, now, timeout = chosen.value
            with lock:
                number = next(numbers)
                self.attempts.append(Attempt(deadline, now, timeout, instant, number))
            token = current.set(number)
            try:
                with real_attempt_deadline(instant):
                    yield
            finally:
                current.reset(token)

        def bounded(timeout, expired):
            attempt, number = retries.current_attempt_deadline(), current.get()
            before = time.monotonic()
            try:
                given = real_bounded(timeout, expired)
            except expired:
                with lock:
                    self.socket_ops.append(SocketOp(attempt, number, before, timeout, None))
                raise
            with lock:
                self.socket_ops.append(SocketOp(attempt, number, before, timeout, given))
            return given

        log = self

        class RetriesClock:
            """ai/retries.py's `time`: the real one, its waits recorded."""

            monotonic = staticmethod(time.monotonic)
            time = staticmethod(time.time)

            @staticmethod
            def sleep(seconds: float) -> None:
                with lock:
                    log.waits.append(seconds)
                time.sleep(seconds)

        monkeypatch.setattr(retries.RetryPolicy, "attempt_timeout", attempt_timeout)
        monkeypatch.setattr(retries, "attempt_deadline", attempt_deadline)
        monkeypatch.setattr(retries, "time", RetriesClock)
        monkeypatch.setattr(transport, "_bounded", bounded)

    def clear(self) -> None:
        self.attempts.clear()
        self.socket_ops.clear()
        self.waits.clear()

    def made(self) -> list[Attempt]:
        return [attempt for attempt in self.attempts if attempt.timeout is not None]

    @property
    def not_made(self) -> list[Attempt]:
        return [attempt for attempt in self.attempts if attempt.timeout is None]

    def ops_of(self, attempt: Attempt) -> list[SocketOp]:
        return [op for op in self.socket_ops if op.attempt_number == attempt.number]

    def assert_bounded(self, attempt: Attempt) -> None:
        """The attempt's timeout went to the SDK (each socket operation asked for it) and no socket
        operation of it could outlast its deadline; it had at least one."""
        ops = self.ops_of(attempt)
        assert ops, f"no socket operation went through the deadline-bound transport: {attempt}"
        assert all(op.attempt_deadline == attempt.ends_by for op in ops), (attempt, ops)
        assert all(op.asked == attempt.timeout for op in ops), (attempt, ops)
        assert all(op.given is None or op.ends_by() <= attempt.ends_by for op in ops), (attempt, ops)
