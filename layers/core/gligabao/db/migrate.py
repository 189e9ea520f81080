"""Versioned, idempotent schema migrations: `NNNN_name.sql` files applied in order, once each."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources

import psycopg
from psycopg import sql

from gligabao.db.connection import Database, register_vector

log = logging.getLogger(__name__)

# Serialises concurrent migrators (two deploys, or tests starting together).
MIGRATION_LOCK_KEY = 0x676C6967

# The service's own role (migration 0003): subject to row-level security, owns nothing.
APP_ROLE = "gligabao_app"

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def available_migrations() -> list[tuple[int, str, str]]:
    files = resources.files("gligabao.db").joinpath("migrations")
    found = []
    for entry in files.iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    return sorted(found)


class EmbeddingSizeChanged(Exception):
    """The database's vectors have another size than the configured one: every vector write would
    fail, so the migrations refuse (the deploy fails with this reason) instead of reporting success."""


@dataclass(frozen=True)
class MigrationLimits:
    """How long a migration may wait and run (the deploy's; `gligabao migrate` and `serve` have
    none). `lock_timeout_ms`: the longest wait for one lock; while DDL waits for a table's lock,
    every query of that table queues behind it, so the wait is short and retried a few times,
    `lock_pause_seconds` apart (the queue drains in between). `deadline` (a time.monotonic()
    value): the migration's statements are cancelled then, its transaction rolled back."""

    lock_timeout_ms: int | None = None
    lock_attempts: int = 1
    lock_pause_seconds: float = 0.0
    deadline: float | None = None

    def remaining_ms(self) -> int | None:
        if self.deadline is None:
            return None
        return int((self.deadline - time.monotonic()) * 1000)


NO_LIMITS = MigrationLimits()


class MigrationFailed(Exception):
    """A migration failed and was rolled back (the ones before it stay applied)."""


def migrate(
    conn: psycopg.Connection, embedding_dimensions: int, limits: MigrationLimits = NO_LIMITS
) -> list[str]:
    """Apply the migrations this database lacks, each in a transaction of its own; returns the
    names applied. The embedding size is fixed by the first migration; another size later is
    EmbeddingSizeChanged, and nothing changes. Versions this code does not know (a newer
    release's, after a rollback of the code) are left alone."""
    conn.add_notice_handler(_log_notice)
    try:
        return _apply_pending(conn, embedding_dimensions, limits)
    finally:
        conn.remove_notice_handler(_log_notice)


def _log_notice(diagnostic: psycopg.errors.Diagnostic) -> None:
    """A migration's own notice (an index left to be rebuilt by hand, say) reaches the deploy's log."""
    message = diagnostic.message_primary or ""
    if message.startswith("gligabao:"):
        log.warning(message)


def _apply_pending(conn: psycopg.Connection, embedding_dimensions: int, limits: MigrationLimits) -> list[str]:
    with conn.transaction():
        _lock_migrations(conn, limits)
        stored = stored_embedding_dimensions(conn)
        if stored is not None and stored != int(embedding_dimensions):
            raise EmbeddingSizeChanged(
                f"the database's embeddings have {stored} dimensions but GB_EMBEDDING_DIMENSIONS "
                f"(EmbeddingDimensions) is {int(embedding_dimensions)}: set it back to {stored}, or use a "
                "new database (the stored vectors cannot be compared with vectors of another size)"
            )
        conn.execute(
            """CREATE TABLE IF NOT EXISTS gb_schema_migrations (
                   version     integer PRIMARY KEY,
                   name        text NOT NULL,
                   applied_at  timestamptz NOT NULL DEFAULT now())"""
        )
        done = _applied_versions(conn)
    applied_now = []
    for version, name, text in available_migrations():
        if version in done:
            continue
        label = f"{version:04d}_{name}"
        if _apply_one(
            conn, version, name, text.replace("{dimensions}", str(int(embedding_dimensions))), limits
        ):
            applied_now.append(label)
    return applied_now


def _apply_one(conn: psycopg.Connection, version: int, name: str, text: str, limits: MigrationLimits) -> bool:
    """One migration in its own transaction, its lock waits retried; False: another migrator
    applied it meanwhile."""
    label = f"{version:04d}_{name}"
    for attempt in range(1, max(1, limits.lock_attempts) + 1):
        try:
            with _cancelled_at(conn, limits.deadline), conn.transaction():
                _lock_migrations(conn, limits)
                if version in _applied_versions(conn):
                    return False
                if limits.lock_timeout_ms is not None:
                    conn.execute(
                        "SELECT set_config('lock_timeout', %s, true)", [f"{limits.lock_timeout_ms}ms"]
                    )
                conn.execute(text)
                conn.execute(
                    "INSERT INTO gb_schema_migrations (version, name) VALUES (%s, %s)", [version, name]
                )
            return True
        except psycopg.errors.LockNotAvailable as exc:
            last_try = attempt >= limits.lock_attempts or _too_late(limits, limits.lock_pause_seconds)
            if last_try:
                raise MigrationFailed(
                    f"migration {label} could not lock its tables within {limits.lock_timeout_ms} ms "
                    f"({attempt} attempt(s)): another transaction holds them; rolled back, "
                    "nothing of it applied"
                ) from exc
            log.warning("migration waiting for a lock", extra={"migration": label, "attempt": attempt})
            time.sleep(limits.lock_pause_seconds)
        except psycopg.errors.QueryCanceled as exc:
            raise MigrationFailed(
                f"migration {label} ran out of time (the function's own timeout comes next): "
                "rolled back, nothing of it applied"
            ) from exc
    raise AssertionError("unreachable")


def _lock_migrations(conn: psycopg.Connection, limits: MigrationLimits) -> None:
    """Serialise migrators (two deploys, tests starting together), within the time left."""
    remaining = limits.remaining_ms()
    if remaining is not None:
        if remaining <= 0:
            raise MigrationFailed("no time left to run a migration: nothing more applied")
        conn.execute("SELECT set_config('statement_timeout', %s, true)", [f"{remaining}ms"])
    conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK_KEY])


def _too_late(limits: MigrationLimits, pause_seconds: float) -> bool:
    remaining = limits.remaining_ms()
    return remaining is not None and remaining < pause_seconds * 1000 + (limits.lock_timeout_ms or 0)


@contextmanager
def _cancelled_at(conn: psycopg.Connection, deadline: float | None) -> Iterator[None]:
    """statement_timeout counts each statement of a migration's file on its own: at the deadline
    the running statement is cancelled from here, so the whole migration stays within it."""
    if deadline is None:
        yield
        return
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), conn.cancel_safe)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _applied_versions(conn: psycopg.Connection) -> set[int]:
    return {_first(row) for row in conn.execute("SELECT version FROM gb_schema_migrations").fetchall()}


def newest_migration() -> int:
    """The version of this code's newest migration file (the template's SchemaVersion)."""
    return available_migrations()[-1][0]


def newest_applied(conn: psycopg.Connection) -> int | None:
    """The newest version the database has applied, or None before the first migration."""
    exists = _first(conn.execute("SELECT to_regclass('gb_schema_migrations') IS NOT NULL").fetchone())
    if not exists:
        return None
    return _first(conn.execute("SELECT max(version) FROM gb_schema_migrations").fetchone())


def stored_embedding_dimensions(conn: psycopg.Connection) -> int | None:
    """The size of the database's entity vectors (pgvector keeps it as the column's typmod), or
    None before the first migration."""
    row = conn.execute(
        """SELECT atttypmod FROM pg_attribute
           WHERE attrelid = to_regclass('gb_entities') AND attname = 'embedding' AND NOT attisdropped"""
    ).fetchone()
    if row is None:
        return None
    size = _first(row)
    return int(size) if size is not None and int(size) > 0 else None


def _first(row):
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


def ensure_schema(
    database: Database, embedding_dimensions: int, limits: MigrationLimits = NO_LIMITS
) -> list[str]:
    """Apply pending migrations on the database's connection, then teach it the vector type."""
    conn = database.connection()
    applied = migrate(conn, embedding_dimensions, limits)
    register_vector(conn)
    return applied


def set_role_password(conn: psycopg.Connection, password: str, role: str = APP_ROLE) -> None:
    """Give `role` this password. Only its SCRAM-SHA-256 verifier is sent, computed by libpq on
    this side (PQencryptPasswordConn; PostgreSQL stores a verifier as given): no statement log
    or error can ever show the password itself."""
    verifier = conn.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256").decode()
    conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(role), sql.Literal(verifier)))
