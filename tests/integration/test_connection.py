"""One connection per container, reused across invocations and re-opened after a failure."""

import psycopg
import pytest

from gligabao.db import connection as db_connection
from gligabao.db.connection import DatabaseUnavailable, user_transaction


def test_the_connection_is_reused_across_transactions(db):
    with user_transaction("u1") as first:
        pid = first.info.backend_pid
    with user_transaction("u1") as second:
        assert second is first
        assert second.info.backend_pid == pid


def test_a_connection_the_server_dropped_is_reopened_transparently(db):
    with user_transaction("u1") as conn:
        old_pid = conn.info.backend_pid
    db.execute("SELECT pg_terminate_backend(%s)", [old_pid])

    with user_transaction("u1") as conn:
        assert conn.info.backend_pid != old_pid
        assert conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}


def test_a_failed_statement_rolls_back_and_leaves_the_connection_usable(db):
    with pytest.raises(psycopg.errors.UndefinedTable), user_transaction("u1") as conn:
        conn.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('u1', 'kept')")
        conn.execute("SELECT * FROM no_such_table")

    with user_transaction("u1") as conn:
        assert conn.execute("SELECT count(*) AS n FROM gb_datasets").fetchone() == {"n": 0}


def test_an_unreachable_database_is_a_503_not_a_crash(database_url, monkeypatch):
    from gligabao import config

    monkeypatch.setenv("DATABASE_URL", "postgresql://gb:pw@127.0.0.1:9/x?connect_timeout=1")
    config.reset_caches()
    db_connection.reset()
    try:
        with pytest.raises(DatabaseUnavailable) as caught, user_transaction("u1"):
            pass
    finally:
        monkeypatch.setenv("DATABASE_URL", database_url)
        config.reset_caches()
        db_connection.reset()
    assert caught.value.status == 503
    assert "pw" not in caught.value.message


def test_after_a_failed_connect_the_configuration_is_read_again(database_url, monkeypatch):
    from gligabao import config

    monkeypatch.setenv("DATABASE_URL", "postgresql://gb:old-password@127.0.0.1:9/x?connect_timeout=1")
    config.reset_caches()
    db_connection.reset()
    try:
        with pytest.raises(DatabaseUnavailable), user_transaction("u1"):
            pass
        monkeypatch.setenv("DATABASE_URL", database_url)  # e.g. the secret now holds a rotated password
        config.reset_caches()

        with user_transaction("u1") as conn:  # no reset of the connection module needed
            assert conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}
    finally:
        monkeypatch.setenv("DATABASE_URL", database_url)
        config.reset_caches()
        db_connection.reset()
