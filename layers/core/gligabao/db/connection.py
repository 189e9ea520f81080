"""One database connection per container (per thread for the local API), reused
across invocations and re-opened after a failure; every access runs in a
transaction scoped to one user."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from gligabao.config import settings
from gligabao.errors import GbError

CONNECT_TIMEOUT_SECONDS = 10

_local = threading.local()
_url_lock = threading.Lock()
_resolved_url: str | None = None


class DatabaseUnavailable(GbError):
    status = 503


def database_url() -> str:
    """DATABASE_URL; on Lambda the proxy endpoint with the cluster secret; locally the embedded PostgreSQL."""
    global _resolved_url
    with _url_lock:
        if _resolved_url is None:
            _resolved_url = _resolve_database_url()
        return _resolved_url


def _resolve_database_url() -> str:
    if settings().database_url:
        return settings().database_url
    if os.environ.get("GB_DB_SECRET_ARN"):
        return _url_from_cluster_secret(os.environ["GB_DB_SECRET_ARN"])
    from gligabao.local.embedded_pg import embedded_database_url

    return embedded_database_url(os.path.join(settings().data_dir, "pgdata"))


def _url_from_cluster_secret(arn: str) -> str:
    import json

    from aws_lambda_powertools.utilities import parameters
    from psycopg.conninfo import make_conninfo

    secret = json.loads(parameters.get_secret(arn))
    return make_conninfo(
        host=os.environ.get("GB_DB_HOST") or secret["host"],
        port=secret.get("port", 5432),
        dbname=os.environ.get("GB_DB_NAME", "gligabao"),
        user=secret["username"],
        password=secret["password"],
        sslmode="require",
    )


def connection() -> psycopg.Connection:
    conn: psycopg.Connection | None = getattr(_local, "conn", None)
    if conn is None or conn.closed or conn.broken:
        conn = _connect()
        _local.conn = conn
    return conn


def _connect() -> psycopg.Connection:
    try:
        conn = psycopg.connect(
            database_url(),
            autocommit=True,
            row_factory=dict_row,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            prepare_threshold=_prepare_threshold(),
        )
    except psycopg.OperationalError as exc:
        _forget_url()  # the next attempt reads the configuration again (e.g. a rotated password)
        raise DatabaseUnavailable("database unavailable") from exc
    _register_vector(conn)
    return conn


def _prepare_threshold() -> int | None:
    # Through RDS Proxy (on Lambda), server-side prepared statements would pin the client to one
    # database connection for its whole life: psycopg then never prepares.
    return None if os.environ.get("GB_DB_SECRET_ARN") else 5


def _register_vector(conn: psycopg.Connection) -> None:
    from pgvector.psycopg import register_vector

    try:
        register_vector(conn)
    except psycopg.ProgrammingError:
        pass  # before the first migration the extension does not exist yet


def close() -> None:
    conn = getattr(_local, "conn", None)
    if conn is not None:
        conn.close()
        _local.conn = None


def reset() -> None:
    """Forget the resolved URL and this thread's connection (tests, configuration changes)."""
    close()
    _forget_url()


def _forget_url() -> None:
    global _resolved_url
    with _url_lock:
        _resolved_url = None


@contextmanager
def user_transaction(user_id: str) -> Iterator[psycopg.Connection]:
    """A transaction scoped to one user: the user is set on it for row-level security."""
    conn = _begin(user_id)
    try:
        yield conn
    except BaseException as exc:
        _finish(conn, b"ROLLBACK", exc)
        raise
    _finish(conn, b"COMMIT", None)


def _begin(user_id: str) -> psycopg.Connection:
    """BEGIN and the transaction's user in one round trip. A connection the server dropped while
    the container was frozen (proxy idle timeout, failover) is replaced once, transparently."""
    # Two statements in one message need the simple protocol, so the user id is bound by
    # psycopg's own literal quoting (never by string formatting).
    begin = sql.SQL("BEGIN; SELECT set_config('gligabao.user_id', {}, true)").format(sql.Literal(user_id))
    for attempt in range(2):
        conn = connection()
        try:
            conn.execute(begin)
        except psycopg.OperationalError as exc:
            _local.conn = None
            if attempt or not (conn.broken or conn.closed):
                raise DatabaseUnavailable("database unavailable") from exc
            continue
        return conn
    raise AssertionError("unreachable")


def _finish(conn: psycopg.Connection, command: bytes, exc: BaseException | None) -> None:
    try:
        if not (conn.broken or conn.closed) and conn.info.transaction_status != TransactionStatus.IDLE:
            conn.execute(command)
    except psycopg.OperationalError as failure:
        _local.conn = None
        if exc is None:
            raise DatabaseUnavailable("database unavailable") from failure
        return
    if isinstance(exc, psycopg.OperationalError) and (conn.broken or conn.closed):
        _local.conn = None
        raise DatabaseUnavailable("database unavailable") from exc
