"""One database connection per container (per thread for the local API), reused
across invocations and re-opened after a failure; every access runs in a
transaction scoped to one user."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
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
            database_url(), autocommit=True, row_factory=dict_row, connect_timeout=CONNECT_TIMEOUT_SECONDS
        )
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable("database unavailable") from exc
    _register_vector(conn)
    return conn


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
    global _resolved_url
    close()
    with _url_lock:
        _resolved_url = None


@contextmanager
def user_transaction(user_id: str) -> Iterator[psycopg.Connection]:
    """A transaction scoped to one user: the user is set on it for row-level security."""
    conn, transaction = _begin()
    try:
        conn.execute("SELECT set_config('gligabao.user_id', %s, true)", [user_id])
        yield conn
    except BaseException as exc:
        _end(conn, transaction, exc)
        raise
    _end(conn, transaction, None)


def _begin() -> tuple[psycopg.Connection, psycopg.Transaction]:
    """BEGIN on this thread's connection; a connection the server dropped while the container
    was frozen (proxy idle timeout, failover) is replaced once, transparently."""
    for attempt in range(2):
        conn = connection()
        transaction = conn.transaction()
        try:
            transaction.__enter__()
        except psycopg.OperationalError as exc:
            _local.conn = None
            if attempt or not (conn.broken or conn.closed):
                raise DatabaseUnavailable("database unavailable") from exc
            continue
        return conn, transaction
    raise AssertionError("unreachable")


def _end(conn: psycopg.Connection, transaction: psycopg.Transaction, exc: BaseException | None) -> None:
    try:
        transaction.__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)
    except psycopg.OperationalError as failure:
        _local.conn = None
        raise DatabaseUnavailable("database unavailable") from failure
    if isinstance(exc, psycopg.OperationalError) and (conn.broken or conn.closed):
        _local.conn = None
        raise DatabaseUnavailable("database unavailable") from exc
