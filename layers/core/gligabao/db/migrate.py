"""Versioned, idempotent schema migrations: `NNNN_name.sql` files applied in order, once each."""

from __future__ import annotations

import logging
import re
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


def migrate(conn: psycopg.Connection, embedding_dimensions: int) -> list[str]:
    """Apply the migrations this database lacks; returns the names applied. The embedding size is
    fixed by the first migration; another size later is EmbeddingSizeChanged, and nothing changes."""
    conn.add_notice_handler(_log_notice)
    try:
        return _apply_pending(conn, embedding_dimensions)
    finally:
        conn.remove_notice_handler(_log_notice)


def _log_notice(diagnostic: psycopg.errors.Diagnostic) -> None:
    """A migration's own notice (an index left to be rebuilt by hand, say) reaches the deploy's log."""
    message = diagnostic.message_primary or ""
    if message.startswith("gligabao:"):
        log.warning(message)


def _apply_pending(conn: psycopg.Connection, embedding_dimensions: int) -> list[str]:
    applied_now = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK_KEY])
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
        done = {_first(row) for row in conn.execute("SELECT version FROM gb_schema_migrations").fetchall()}
        for version, name, sql in available_migrations():
            if version in done:
                continue
            conn.execute(sql.replace("{dimensions}", str(int(embedding_dimensions))))
            conn.execute("INSERT INTO gb_schema_migrations (version, name) VALUES (%s, %s)", [version, name])
            applied_now.append(f"{version:04d}_{name}")
    return applied_now


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


def ensure_schema(database: Database, embedding_dimensions: int) -> list[str]:
    """Apply pending migrations on the database's connection, then teach it the vector type."""
    conn = database.connection()
    applied = migrate(conn, embedding_dimensions)
    register_vector(conn)
    return applied


def set_role_password(conn: psycopg.Connection, password: str, role: str = APP_ROLE) -> None:
    """Give `role` this password. Only its SCRAM-SHA-256 verifier is sent, computed by libpq on
    this side (PQencryptPasswordConn; PostgreSQL stores a verifier as given): no statement log
    or error can ever show the password itself."""
    verifier = conn.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256").decode()
    conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(role), sql.Literal(verifier)))
