"""The database: one connection per container (per thread in the local API), reused across
invocations and re-opened after a failure; every access is a unit of work, one transaction scoped
to one user.

`Database` knows nothing of where its URL comes from: the bootstrap gives it a function that
resolves one (DATABASE_URL, the cluster secret on Lambda, the embedded PostgreSQL locally), called
again after a failed connect so that a rotated password is picked up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

import psycopg
from psycopg import errors, sql
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from gligabao.db.datasets import LOCK_OR_CREATE
from gligabao.errors import GbError

T = TypeVar("T")

CONNECT_TIMEOUT_SECONDS = 10
# A connection used this recently is trusted to be open: a pipelined transaction sends its BEGIN
# with its first statement. One idle longer (a container frozen between invocations) is checked by
# a BEGIN of its own first, which replaces it transparently when the server dropped it.
TRUSTED_IDLE_SECONDS = 30.0


# Kept between a statement cut by the invocation's deadline and the invocation's end: to roll back
# (which releases the dataset's lock), record the failure and answer 503 before Lambda ends it.
STATEMENT_DEADLINE_MARGIN_SECONDS = 1.0
# The invocation's end (a time.monotonic() instant), set by the handler for its request
# (`statements_end_before`); None: no deadline (tests, scripts), the server's statement_timeout.
_statement_deadline: ContextVar[float | None] = ContextVar("gligabao_statement_deadline", default=None)


class DatabaseUnavailable(GbError):
    status = 503


class DatabaseTimeout(GbError):
    """A statement would have run past the invocation's end: cut, its transaction rolled back."""

    status = 503


@contextmanager
def statements_end_before(deadline: float | None) -> Iterator[None]:
    """Inside, every transaction cuts its statements `STATEMENT_DEADLINE_MARGIN_SECONDS` before
    `deadline` (a time.monotonic() instant: the Lambda's end), set in its first round trip."""
    token = _statement_deadline.set(deadline)
    try:
        yield
    finally:
        _statement_deadline.reset(token)


def statement_timeout_ms(now: float | None = None) -> int | None:
    """The statement_timeout of a transaction beginning `now`: the time left before the deadline,
    less the margin, in milliseconds (at least 1: 0 would turn the timeout off); None without a
    deadline."""
    deadline = _statement_deadline.get()
    if deadline is None:
        return None
    left = deadline - (time.monotonic() if now is None else now) - STATEMENT_DEADLINE_MARGIN_SECONDS
    return max(1, int(left * 1000))


# The transaction's user, the dataset it is about ('': none, every dataset of the user) and its
# statement timeout (NULL: the server's), set for the transaction only. Row-level security shows
# the rows of the user's datasets, and of the named one only (migration 0047): with a dataset
# named, each policy reads one row of gb_datasets, whatever the number of the user's datasets.
_SET_USER_AND_TIMEOUT = (
    "SELECT set_config('gligabao.user_id', {user}, true),"
    " set_config('gligabao.dataset', coalesce({dataset}, ''), true),"
    " set_config('statement_timeout', coalesce({timeout}::text, current_setting('statement_timeout')), true)"
)
_PIPELINED_SET_USER_AND_TIMEOUT = _SET_USER_AND_TIMEOUT.format(
    user="%(user)s", dataset="%(dataset)s::text", timeout="%(timeout)s"
)


@dataclass(frozen=True)
class UnitOfWork:
    """One open transaction of one user: its connection and, when one was named, the id of the
    user's dataset (None when the user has no such dataset)."""

    conn: psycopg.Connection
    user_id: str
    dataset_id: int | None = None
    _commit: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    def commit(self) -> None:
        """Commit now, before the block ends (which then does nothing more). In pipeline mode the
        statements still queued travel with the COMMIT, and their results are read afterwards."""
        if self._commit is not None:
            self._commit()
        else:
            self.conn.execute(b"COMMIT")


class Database:
    """Units of work on one PostgreSQL database."""

    def __init__(self, resolve_url: Callable[[], str], *, server_side_prepare: bool = True):
        self._resolve_url = resolve_url
        # Through RDS Proxy, server-side prepared statements would pin the client to one database
        # connection for its whole life: psycopg then never prepares.
        self._prepare_threshold = 5 if server_side_prepare else None
        self._url: str | None = None
        self._url_lock = threading.Lock()
        self._local = threading.local()

    def url(self) -> str:
        with self._url_lock:
            if self._url is None:
                self._url = self._resolve_url()
            return self._url

    def connection(self) -> psycopg.Connection:
        """This thread's connection, opened (again) when it has none or lost it."""
        conn: psycopg.Connection | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed or conn.broken:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def _connect(self) -> psycopg.Connection:
        try:
            conn = psycopg.connect(
                self.url(),
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                prepare_threshold=self._prepare_threshold,
            )
        except psycopg.OperationalError as exc:
            self.forget_url()  # the next attempt reads the configuration again (a rotated password)
            raise DatabaseUnavailable("database unavailable") from exc
        register_vector(conn)
        return conn

    def forget_url(self) -> None:
        with self._url_lock:
            self._url = None

    def close(self) -> None:
        """Close this thread's connection (tests, configuration changes)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(
        self,
        user_id: str,
        dataset: str | None = None,
        *,
        lock_dataset: bool = False,
        pipeline: bool = False,
        scope: str | None = None,
    ) -> Iterator[UnitOfWork]:
        """A unit of work of `user_id`: committed when the block ends, rolled back when it raises.

        The user is set on the transaction (`gligabao.user_id`, for row-level security); with a
        `dataset`, its id is looked up in the same round trip as BEGIN; with `lock_dataset` too, the
        dataset is created when missing and its row locked until the transaction ends (the stores
        of one dataset run one at a time).

        The transaction sees the rows of that dataset only (`gligabao.dataset`), or of `scope`'s,
        a dataset it is about without its id being looked up; with neither, all the user's.

        `pipeline`: the block runs in psycopg's pipeline mode: a statement costs a round trip only
        when its result is read, so statements sent before a read share its round trip, and those
        sent last (their results unread, or read after the block) share the one of COMMIT.
        """
        scope = dataset if dataset is not None else scope
        if pipeline and dataset is None and self._trusted():
            with self._pipelined(self.connection(), user_id, None, begin=True, scope=scope) as uow:
                yield uow
            return
        conn, dataset_id = self._begin(user_id, dataset, lock_dataset, scope)
        if pipeline:
            with self._pipelined(conn, user_id, dataset_id) as uow:
                yield uow
            return
        try:
            yield UnitOfWork(conn, user_id, dataset_id)
        except BaseException as exc:
            self._finish(conn, b"ROLLBACK", exc)
            _raise_timeout_of(exc)
            raise
        self._finish(conn, b"COMMIT", None)
        self._local.used_at = time.monotonic()

    def read(
        self,
        user_id: str,
        work: Callable[[UnitOfWork], T],
        dataset: str | None = None,
        *,
        scope: str | None = None,
    ) -> T:
        """`work`, which only reads, in a pipelined transaction of `user_id` (with `dataset`'s id
        looked up and the rows seen those of `dataset` or `scope`, as `transaction` does). A
        connection used moments ago is trusted without a check: dropped since (a failover, a killed
        backend), its first read fails, and `work` runs once more on a new connection, checked
        with a BEGIN of its own. Only a read is sent again: a write whose COMMIT was lost may have
        been applied."""
        trusted = dataset is None and self._trusted()
        try:
            with self.transaction(user_id, dataset, pipeline=True, scope=scope) as uow:
                return work(uow)
        except DatabaseUnavailable:
            if not trusted:
                raise
        with self.transaction(user_id, dataset, pipeline=True, scope=scope) as uow:
            return work(uow)

    def _trusted(self) -> bool:
        conn = getattr(self._local, "conn", None)
        used_at = getattr(self._local, "used_at", None)
        return (
            conn is not None
            and not (conn.closed or conn.broken)
            and used_at is not None
            and time.monotonic() - used_at < TRUSTED_IDLE_SECONDS
        )

    @contextmanager
    def _pipelined(
        self,
        conn: psycopg.Connection,
        user_id: str,
        dataset_id: int | None,
        begin: bool = False,
        scope: str | None = None,
    ) -> Iterator[UnitOfWork]:
        pipeline = conn.pipeline()
        pipeline.__enter__()
        ended = False

        def end(command: bytes, exc: BaseException | None) -> None:
            nonlocal ended
            if ended:
                return
            ended = True
            try:
                if not (conn.broken or conn.closed):
                    # Sent with the statements still queued: one round trip. Never prepared: after
                    # an error the server skips it, and a prepared ROLLBACK would be missing next time.
                    conn.execute(command, prepare=False)
            finally:
                pipeline.__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)

        try:
            if begin:
                conn.execute(b"BEGIN")
                conn.execute(
                    _PIPELINED_SET_USER_AND_TIMEOUT,
                    {"user": user_id, "dataset": scope, "timeout": statement_timeout_ms()},
                )
            try:
                yield UnitOfWork(conn, user_id, dataset_id, lambda: end(b"COMMIT", None))
            except BaseException as exc:
                end(b"ROLLBACK", exc)
                raise
            end(b"COMMIT", None)
        except BaseException as exc:
            # A statement that failed in the pipeline leaves the transaction aborted: rolled back here.
            self._finish(conn, b"ROLLBACK", exc)
            if isinstance(exc, psycopg.Error):
                # psycopg counts a statement as prepared when it queues it; the server skips what
                # follows an error in an aborted pipeline, so the two can disagree ("prepared
                # statement _pg3_N does not exist" on the next use). A new connection starts clean.
                self._discard(conn)
            _raise_timeout_of(exc)
            raise
        self._local.used_at = time.monotonic()

    def _begin(
        self, user_id: str, dataset: str | None, lock_dataset: bool = False, scope: str | None = None
    ) -> tuple[psycopg.Connection, int | None]:
        """BEGIN, the transaction's user (and the dataset's id) in one round trip. A connection the
        server dropped while the container was frozen (proxy idle timeout, failover) is replaced
        once, transparently."""
        for attempt in range(2):
            conn = self.connection()
            try:
                cursor = conn.execute(
                    _begin_statement(user_id, dataset, lock_dataset, statement_timeout_ms(), scope)
                )
                dataset_id = _dataset_id(cursor) if dataset is not None else None
            except errors.QueryCanceled as exc:  # waited past the deadline (the dataset's lock)
                self._finish(conn, b"ROLLBACK", exc)
                _raise_timeout_of(exc)
                raise
            except psycopg.OperationalError as exc:
                self._local.conn = None
                if attempt or not (conn.broken or conn.closed):
                    raise DatabaseUnavailable("database unavailable") from exc
                continue
            return conn, dataset_id
        raise AssertionError("unreachable")

    def _discard(self, conn: psycopg.Connection) -> None:
        """Close `conn` and forget it: the next transaction opens a new connection."""
        _close_quietly(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def _finish(self, conn: psycopg.Connection, command: bytes, exc: BaseException | None) -> None:
        try:
            if not (conn.broken or conn.closed) and conn.info.transaction_status != TransactionStatus.IDLE:
                conn.execute(command, prepare=False)
        except psycopg.OperationalError as failure:
            self._local.conn = None
            if exc is None:
                raise DatabaseUnavailable("database unavailable") from failure
            if isinstance(exc, psycopg.OperationalError):  # the rollback found the connection gone
                raise DatabaseUnavailable("database unavailable") from exc
            return
        except psycopg.Error:
            if exc is None:
                raise
            # The rollback of a failed transaction failed: the connection is in a state nobody
            # can trust. Closing it ends the transaction (the server rolls it back); the caller
            # sees the first error, and the next request connects afresh.
            self._discard(conn)
            return
        if _connection_lost(conn, exc):
            self._discard(conn)
            raise DatabaseUnavailable("database unavailable") from exc


# The server ending the session (an administrator, a shutdown or a failover: 57P01-57P03) or a
# connection failure (class 08). The server's message can arrive before psycopg sees the socket
# close, while the connection still looks usable.
_SESSION_ENDED_STATES = ("08", "57P01", "57P02", "57P03")


def _connection_lost(conn: psycopg.Connection, exc: BaseException | None) -> bool:
    if not isinstance(exc, psycopg.OperationalError):
        return False
    return conn.broken or conn.closed or (exc.sqlstate or "").startswith(_SESSION_ENDED_STATES)


def _close_quietly(conn: psycopg.Connection) -> None:
    try:
        conn.close()
    except Exception:  # closing a broken connection must not hide the error being handled
        pass


def _raise_timeout_of(exc: BaseException) -> None:
    """A statement cut by its timeout (the invocation's deadline) is a 503, not an internal error."""
    if isinstance(exc, errors.QueryCanceled):
        raise DatabaseTimeout("the database did not answer in time; try again") from exc


def _begin_statement(
    user_id: str,
    dataset: str | None,
    lock_dataset: bool = False,
    timeout_ms: int | None = None,
    scope: str | None = None,
) -> sql.Composed:
    # Several statements in one message need the simple protocol, so the values are bound by
    # psycopg's own literal quoting (never by string formatting). Since PostgreSQL 13 each
    # statement of the message has the timeout the one before it set.
    begin = sql.SQL("BEGIN; " + _SET_USER_AND_TIMEOUT).format(
        user=sql.Literal(user_id),
        dataset=sql.Literal(scope) + sql.SQL("::text"),
        timeout=sql.Literal(timeout_ms),
    )
    if dataset is None:
        return begin
    if lock_dataset:
        found = sql.SQL(LOCK_OR_CREATE)
    else:
        found = sql.SQL("SELECT id FROM gb_datasets WHERE user_id = {user} AND name = {name}")
    return begin + sql.SQL("; ") + found.format(user=sql.Literal(user_id), name=sql.Literal(dataset))


def _dataset_id(cursor: psycopg.Cursor) -> int | None:
    """The last result of the BEGIN message: the dataset's id, if the user has it."""
    while cursor.nextset():
        pass
    row = cursor.fetchone()
    return row["id"] if row else None


def register_vector(conn: psycopg.Connection) -> None:
    from pgvector.psycopg import register_vector as register

    try:
        register(conn)
    except psycopg.ProgrammingError:
        pass  # before the first migration the extension does not exist yet
