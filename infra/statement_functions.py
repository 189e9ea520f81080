"""Write the migration that creates the statement functions (db/statement_functions.py) which no
migration creates yet: those of statements changed in db/graph_reads.py since the last one.

    make statement-functions      # .venv/bin/python infra/statement_functions.py

Their result types are read on a scratch database migrated to the newest migration, on
DATABASE_URL's server or on the embedded PostgreSQL of `make serve` (var/pgdata). The new file is
the next migration number, and template.yaml's SchemaVersion follows it (a deploy then runs it).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS = ROOT / "layers" / "core" / "gligabao" / "db" / "migrations"
TEMPLATE = ROOT / "template.yaml"


def server_url() -> str:
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    from gligabao.local.embedded_pg import embedded_database_url

    return embedded_database_url(str(ROOT / "var" / "pgdata"))


def missing_functions() -> list:
    from gligabao.db.graph_reads import STATEMENT_FUNCTIONS

    written = "".join(path.read_text(encoding="utf-8") for path in MIGRATIONS.glob("*.sql"))
    return [f for f in STATEMENT_FUNCTIONS if f"CREATE FUNCTION {f.function_name}(" not in written]


def write_migration(functions: list) -> Path:
    from gligabao.db.migrate import migrate, newest_migration
    from gligabao.db.statement_functions import migration_sql
    from gligabao.settings import Settings

    admin = server_url()
    scratch = f"gligabao_statement_functions_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(scratch)))
    try:
        with psycopg.connect(make_conninfo(admin, dbname=scratch), autocommit=True) as conn:
            migrate(conn, Settings().embedding_dimensions)
            text = migration_sql(conn, functions)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(scratch)))
    version = newest_migration() + 1
    path = MIGRATIONS / f"{version:04d}_statement_functions.sql"
    path.write_text(text, encoding="utf-8")
    template = TEMPLATE.read_text(encoding="utf-8")
    TEMPLATE.write_text(
        re.sub(r'(SchemaVersion: )"\d+"', rf'\g<1>"{version}"', template, count=1), encoding="utf-8"
    )
    return path


def main() -> int:
    functions = missing_functions()
    if not functions:
        print("every statement function has its migration")
        return 0
    path = write_migration(functions)
    names = ", ".join(f.function_name for f in functions)
    print(f"wrote {path.relative_to(ROOT)} ({names}); template.yaml's SchemaVersion follows it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
