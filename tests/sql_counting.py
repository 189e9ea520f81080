"""Counting the SQL round trips psycopg makes (tests and benchmarks).

Every statement psycopg sends waits for its reply: each `execute`/`executemany` and each
transaction command psycopg sends on its own (BEGIN, COMMIT, ROLLBACK, SAVEPOINT) is one round trip.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class RoundTrips:
    statements: list[str] = field(default_factory=list)
    sql_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def count(self) -> int:
        return len(self.statements)

    def add(self, statement: object, seconds: float) -> None:
        text = statement.decode() if isinstance(statement, bytes) else str(statement)
        with self._lock:
            self.statements.append(text)
            self.sql_seconds += seconds


@contextlib.contextmanager
def counting_round_trips(this_thread_only: bool = False) -> Iterator[RoundTrips]:
    """Count the round trips of this process (or of the calling thread only) while inside."""
    import psycopg
    from psycopg._connection_base import BaseConnection

    counter = RoundTrips()
    thread = threading.get_ident()
    original_execute, original_executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany
    original_command = BaseConnection._exec_command

    def counted(statement: object, started: float) -> None:
        if not this_thread_only or threading.get_ident() == thread:
            counter.add(statement, time.perf_counter() - started)

    def execute(self, query, *args, **kwargs):
        started = time.perf_counter()
        try:
            return original_execute(self, query, *args, **kwargs)
        finally:
            counted(query, started)

    def executemany(self, query, *args, **kwargs):
        started = time.perf_counter()
        try:
            return original_executemany(self, query, *args, **kwargs)
        finally:
            counted(query, started)

    def exec_command(self, command, *args, **kwargs):  # a generator, as psycopg's own
        started = time.perf_counter()
        try:
            return (yield from original_command(self, command, *args, **kwargs))
        finally:
            counted(command, started)

    psycopg.Cursor.execute, psycopg.Cursor.executemany = execute, executemany
    BaseConnection._exec_command = exec_command
    try:
        yield counter
    finally:
        psycopg.Cursor.execute, psycopg.Cursor.executemany = original_execute, original_executemany
        BaseConnection._exec_command = original_command
