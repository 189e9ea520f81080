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


def count_round_trips_into(path: str) -> None:
    """In a worker process of the local API (its setup): append each round trip's statement to
    `path`, one JSON line each, for the life of the process."""
    import atexit
    import json

    recorded = counting_round_trips()
    counter = recorded.__enter__()
    atexit.register(recorded.__exit__, None, None, None)
    original_add = counter.add

    def add(statement: object, seconds: float) -> None:
        original_add(statement, seconds)
        text = statement.decode() if isinstance(statement, bytes) else str(statement)
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(text) + "\n")

    counter.add = add


def statements_in(path: str) -> list[str]:
    """The statements count_round_trips_into recorded so far."""
    import json
    import os

    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as log:
        return [json.loads(line) for line in log if line.strip()]
