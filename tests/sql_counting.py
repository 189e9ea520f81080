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

from psycopg.rows import tuple_row

from gligabao.db import graph_reads


@dataclass
class RoundTrips:
    statements: list[str] = field(default_factory=list)
    seconds_each: list[float] = field(default_factory=list)
    sql_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def count(self) -> int:
        return len(self.statements)

    def add(self, statement: object, seconds: float) -> None:
        text = statement.decode() if isinstance(statement, bytes) else str(statement)
        with self._lock:
            self.statements.append(text)
            self.seconds_each.append(seconds)
            self.sql_seconds += seconds


@contextlib.contextmanager
def counting_round_trips(this_thread_only: bool = False) -> Iterator[RoundTrips]:
    """Count the round trips of this process (or of the calling thread only) while inside.

    Outside pipeline mode each statement is one. In pipeline mode (`conn.pipeline()`) statements
    are only queued: a round trip is each wait for their results (a fetch, a sync, the end of the
    pipeline), counted with the statements it carried."""
    import psycopg
    from psycopg._connection_base import BaseConnection
    from psycopg._pipeline_base import BasePipeline

    counter = RoundTrips()
    thread = threading.get_ident()
    local = threading.local()  # depth: inside a counted call (executemany pipelines on its own)
    queued: list[str] = []  # statements sent in pipeline mode, not yet waited for
    original_execute, original_executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany
    original_command = BaseConnection._exec_command
    original_waits = {name: getattr(BasePipeline, name) for name in ("_fetch_gen", "_sync_gen", "_exit_gen")}

    def ours() -> bool:
        return not this_thread_only or threading.get_ident() == thread

    def counted(statement: object, started: float) -> None:
        if ours():
            counter.add(statement, time.perf_counter() - started)

    def direct(call, conn, statement, *args, **kwargs):
        if getattr(conn, "_pipeline", None) or getattr(local, "depth", 0):
            if ours() and not getattr(local, "depth", 0):
                queued.append(statement.decode() if isinstance(statement, bytes) else str(statement))
            return call()
        local.depth = 1
        started = time.perf_counter()
        try:
            return call()
        finally:
            local.depth = 0
            counted(statement, started)

    def execute(self, query, *args, **kwargs):
        return direct(lambda: original_execute(self, query, *args, **kwargs), self._conn, query)

    def executemany(self, query, *args, **kwargs):
        return direct(lambda: original_executemany(self, query, *args, **kwargs), self._conn, query)

    def exec_command(self, command, *args, **kwargs):  # a generator, as psycopg's own
        if self._pipeline or getattr(local, "depth", 0):
            if ours() and not getattr(local, "depth", 0):
                queued.append(command.decode() if isinstance(command, bytes) else str(command))
            return (yield from original_command(self, command, *args, **kwargs))
        started = time.perf_counter()
        try:
            return (yield from original_command(self, command, *args, **kwargs))
        finally:
            counted(command, started)

    def waiting(name):
        original = original_waits[name]

        def wait(self, *args, **kwargs):  # a generator, as psycopg's own
            # A sync (and the pipeline's end) always waits for the server's ReadyForQuery; a fetch
            # waits only for results still expected.
            pending = name != "_fetch_gen" or bool(self.result_queue or self.command_queue)
            if getattr(local, "depth", 0) or getattr(local, "waiting", False) or not pending:
                return (yield from original(self, *args, **kwargs))
            local.waiting = True
            started = time.perf_counter()
            try:
                return (yield from original(self, *args, **kwargs))
            finally:
                local.waiting = False
                if ours():
                    carried = "; ".join(queued) or "(pipeline sync)"
                    queued.clear()
                    counter.add(f"[pipeline] {carried}", time.perf_counter() - started)

        return wait

    psycopg.Cursor.execute, psycopg.Cursor.executemany = execute, executemany
    BaseConnection._exec_command = exec_command
    for name in original_waits:
        setattr(BasePipeline, name, waiting(name))
    try:
        yield counter
    finally:
        psycopg.Cursor.execute, psycopg.Cursor.executemany = original_execute, original_executemany
        BaseConnection._exec_command = original_command
        for name, original in original_waits.items():
            setattr(BasePipeline, name, original)


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


class RecordingConnection:
    """A connection that keeps each statement sent through it with its parameters (COMMIT aside),
    to run them again, or EXPLAIN them, in another transaction."""

    def __init__(self, conn):
        self._conn = conn
        self.sent: list[tuple[object, object]] = []

    def execute(self, query, params=None):
        if query != b"COMMIT":  # a statement function's call: the statement it runs
            self.sent.append(graph_reads.unwrapped(query, params))
        return self._conn.execute(query, params)


def table_rows_read(conn, *tables: str) -> int:
    """The rows of these tables the connection's current transaction has read from the tables
    themselves: those its sequential scans returned and those its index scans fetched (index-only
    scans that need no heap fetch read none)."""
    [read] = (
        conn.cursor(row_factory=tuple_row)  # whatever rows the connection itself makes
        .execute(
            """SELECT sum(pg_stat_get_xact_tuples_returned(t) + pg_stat_get_xact_tuples_fetched(t))
               FROM unnest(%s::regclass[]) AS t""",
            [list(tables)],
        )
        .fetchone()
    )
    return int(read)


@contextlib.contextmanager
def capturing_statement_texts() -> Iterator[list[bytes]]:
    """Every statement text this process sends while inside, as the server receives it (the SQL
    with `$n` placeholders, or with the values merged in by client-side binding), commands too."""
    from psycopg import _queries
    from psycopg._connection_base import BaseConnection

    texts: list[bytes] = []
    classes = (_queries.PostgresQuery, _queries.PostgresClientQuery, _queries.PostgresRawQuery)
    originals = {cls: cls.__dict__["convert"] for cls in classes}
    original_command = BaseConnection._exec_command

    def converting(original):
        def convert(self, query, vars):
            original(self, query, vars)
            texts.append(bytes(self.query))

        return convert

    def exec_command(self, command, *args, **kwargs):  # a generator, as psycopg's own
        texts.append(command.as_bytes(self) if hasattr(command, "as_bytes") else _as_bytes(command))
        return (yield from original_command(self, command, *args, **kwargs))

    for cls, original in originals.items():
        cls.convert = converting(original)
    BaseConnection._exec_command = exec_command
    try:
        yield texts
    finally:
        for cls, original in originals.items():
            cls.convert = original
        BaseConnection._exec_command = original_command


def _as_bytes(command: object) -> bytes:
    return command if isinstance(command, bytes) else str(command).encode()
