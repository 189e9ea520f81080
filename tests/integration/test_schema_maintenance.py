"""The schema's upkeep: ANALYZE, VACUUM, REINDEX and autovacuum run the index expressions' functions
with only pg_catalog on the search path (autovacuum always, the commands by hand since PostgreSQL
17), and must succeed on every table (migration 0026)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import psycopg
import pytest
from conftest import count_rows
from graph_rows import fill_every_table
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from gligabao.db.migrate import migrate
from gligabao.settings import Settings

# What maintenance runs the index expressions with (PostgreSQL 17's "safe search_path").
MAINTENANCE_SEARCH_PATH = "pg_catalog, pg_temp"
# How long autovacuum gets to analyze every loaded table, at a naptime of one second.
AUTOANALYZE_WAIT_SECONDS = 45


def schema_tables(conn: psycopg.Connection) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
    ]


def test_analyze_vacuum_and_reindex_succeed_on_every_table_with_only_pg_catalog_on_the_search_path(
    db, admin_database_url
):
    fill_every_table(db)
    tables = schema_tables(db)
    failures = {}

    with psycopg.connect(admin_database_url, autocommit=True) as maintenance:
        maintenance.execute(f"SET search_path = {MAINTENANCE_SEARCH_PATH}")
        for table in tables:
            for command in ("ANALYZE", "VACUUM", "REINDEX TABLE"):
                try:
                    maintenance.execute(sql.SQL(command + " {}").format(sql.Identifier("public", table)))
                except psycopg.Error as error:
                    failures[f"{command} {table}"] = str(error).splitlines()[0]

    assert "gb_entities" in tables and count_rows(db, "gb_entities") > 0
    assert failures == {}


@pytest.fixture
def own_database(admin_database_url) -> Iterator[str]:
    """A migrated database of this test's own: its tables' autovacuum settings and load change no
    other test's plans."""
    name = f"gligabao_autovacuum_{os.getpid()}"
    with psycopg.connect(admin_database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_conninfo(**{**conninfo_to_dict(admin_database_url), "dbname": name})
    with psycopg.connect(url) as conn:
        migrate(conn, Settings().embedding_dimensions)
    yield url
    with psycopg.connect(admin_database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextlib.contextmanager
def autovacuum_naptime(url: str, seconds: int) -> Iterator[None]:
    """The server's autovacuum_naptime (60 s by default) set to `seconds` inside, as it was after:
    a setting the server's other databases share, changed only for as long as the test waits."""
    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
            pytest.skip("ALTER SYSTEM needs a superuser (the embedded PostgreSQL's)")
        setting, source_file = conn.execute(
            "SELECT setting, sourcefile FROM pg_settings WHERE name = 'autovacuum_naptime'"
        ).fetchone()
        conn.execute(sql.SQL("ALTER SYSTEM SET autovacuum_naptime = {}").format(sql.Literal(seconds)))
        conn.execute("SELECT pg_reload_conf()")
        try:
            yield
        finally:
            if source_file and source_file.endswith("postgresql.auto.conf"):  # set by ALTER SYSTEM before
                conn.execute(sql.SQL("ALTER SYSTEM SET autovacuum_naptime = {}").format(sql.Literal(setting)))
            else:
                conn.execute("ALTER SYSTEM RESET autovacuum_naptime")
            conn.execute("SELECT pg_reload_conf()")


def test_autovacuum_analyzes_every_table_after_a_load(own_database, admin_database_url):
    """On PostgreSQL 16 autovacuum's ANALYZE of gb_entities failed every minute before migration
    0026: the planner never had the table's statistics."""
    with psycopg.connect(own_database, autocommit=True) as conn:
        tables = schema_tables(conn)
        for table in tables:  # any change is reason enough to analyze (default: 50 rows and 10%)
            conn.execute(
                sql.SQL(
                    "ALTER TABLE {} SET (autovacuum_analyze_threshold = 0, autovacuum_analyze_scale_factor = 0)"
                ).format(sql.Identifier(table))
            )
        fill_every_table(conn)
        loaded = [table for table in tables if count_rows(conn, table) > 0]

    with autovacuum_naptime(admin_database_url, 1), psycopg.connect(own_database, autocommit=True) as conn:
        deadline = time.monotonic() + AUTOANALYZE_WAIT_SECONDS
        while True:
            not_analyzed = [
                row[0]
                for row in conn.execute(
                    """SELECT relname FROM pg_stat_user_tables
                       WHERE relname = ANY(%s) AND last_autoanalyze IS NULL ORDER BY relname""",
                    [loaded],
                )
            ]
            if not not_analyzed or time.monotonic() > deadline:
                break
            time.sleep(0.5)

    assert loaded == tables  # the load reached every table
    assert not_analyzed == []
