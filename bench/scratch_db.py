"""A scratch database for a bench: the service's schema, dropped when the bench ends."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def scratch_database(prefix: str, dims: int) -> Iterator[str]:
    """The URL of a new database `<prefix>_<pid>` on DATABASE_URL's server (else the embedded
    PostgreSQL in var/bench-pgdata), as that URL's role, migrated for `dims`-dimension vectors."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from gligabao.db.migrate import migrate
    from gligabao.local.embedded_pg import embedded_database_url

    admin = os.environ.get("DATABASE_URL") or embedded_database_url(str(ROOT / "var" / "bench-pgdata"))
    name = f"{prefix}_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_conninfo(**{**conninfo_to_dict(admin), "dbname": name})
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            migrate(conn, dims)
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
