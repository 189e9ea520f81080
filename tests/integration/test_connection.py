"""One connection per container, reused across units of work and re-opened after a failure."""

import psycopg
import pytest

from gligabao.db.connection import Database, DatabaseUnavailable


def test_the_connection_is_reused_across_transactions(test_database, db):
    with test_database.transaction("u1") as first:
        pid = first.conn.info.backend_pid
    with test_database.transaction("u1") as second:
        assert second.conn is first.conn
        assert second.conn.info.backend_pid == pid


def test_the_transaction_is_scoped_to_its_user(test_database, db):
    with test_database.transaction("u1") as uow:
        assert uow.conn.execute("SELECT current_setting('gligabao.user_id') AS u").fetchone() == {"u": "u1"}
    with test_database.transaction("u2 ") as uow:
        assert uow.conn.execute("SELECT current_setting('gligabao.user_id') AS u").fetchone() == {"u": "u2 "}


def test_a_named_dataset_is_looked_up_with_begin(test_database, db):
    db.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('u1', 'main'), ('u2', 'notes')")

    with test_database.transaction("u1", "main") as mine, test_database.transaction("u1", "notes") as other:
        assert mine.dataset_id == 1
        assert other.dataset_id is None  # u2's dataset is not u1's


def test_a_connection_the_server_dropped_is_reopened_transparently(test_database, db):
    with test_database.transaction("u1") as uow:
        old_pid = uow.conn.info.backend_pid
    db.execute("SELECT pg_terminate_backend(%s)", [old_pid])

    with test_database.transaction("u1") as uow:
        assert uow.conn.info.backend_pid != old_pid
        assert uow.conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}


def test_a_failed_statement_rolls_back_and_leaves_the_connection_usable(test_database, db):
    with pytest.raises(psycopg.errors.UndefinedTable), test_database.transaction("u1") as uow:
        uow.conn.execute("INSERT INTO gb_datasets (user_id, name) VALUES ('u1', 'kept')")
        uow.conn.execute("SELECT * FROM no_such_table")

    with test_database.transaction("u1") as uow:
        assert uow.conn.execute("SELECT count(*) AS n FROM gb_datasets").fetchone() == {"n": 0}


def test_an_unreachable_database_is_a_503_not_a_crash():
    database = Database(lambda: "postgresql://gb:pw@127.0.0.1:9/x?connect_timeout=1")
    with pytest.raises(DatabaseUnavailable) as caught, database.transaction("u1"):
        pass
    assert caught.value.status == 503
    assert "pw" not in caught.value.message


def test_after_a_failed_connect_the_configuration_is_read_again(database_url):
    urls = iter(["postgresql://gb:old-password@127.0.0.1:9/x?connect_timeout=1", database_url])
    database = Database(lambda: next(urls))  # e.g. the secret now holds a rotated password
    with pytest.raises(DatabaseUnavailable), database.transaction("u1"):
        pass

    with database.transaction("u1") as uow:
        assert uow.conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}
    database.close()


def test_failed_pipelined_transactions_in_a_row_each_raise_their_own_error(test_database):
    # The server skips what follows an error in a pipeline, ROLLBACK included; psycopg still
    # counts it towards preparing it, and a prepared ROLLBACK that the server never saw failed the
    # fifth rollback with "prepared statement _pg3_N does not exist" (a 500 instead of the error).
    for _ in range(8):
        with (
            pytest.raises(psycopg.errors.DivisionByZero),
            test_database.transaction("u1", pipeline=True) as uow,
        ):
            uow.conn.execute("SELECT 1/0").fetchall()

    with test_database.transaction("u1", pipeline=True) as uow:
        assert uow.conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}


def test_a_read_on_a_trusted_connection_the_server_dropped_is_sent_again_once(test_database, db):
    """The drop shows when the pipeline sends its BEGIN (the socket already closed) or at the first
    read: either way the read runs again, once, on one new connection."""
    with test_database.transaction("u1", pipeline=True) as uow:
        old_pid = uow.conn.info.backend_pid
    db.execute("SELECT pg_terminate_backend(%s)", [old_pid])
    pids = []

    def work(uow):
        pids.append(uow.conn.info.backend_pid)
        return uow.conn.execute("SELECT 1 AS one").fetchone()

    assert test_database.read("u1", work) == {"one": 1}
    assert pids[-1] != old_pid and pids[:-1] in ([], [old_pid])
    with pytest.raises(DatabaseUnavailable), test_database.transaction("u1", pipeline=True) as uow:
        db.execute("SELECT pg_terminate_backend(%s)", [uow.conn.info.backend_pid])
        uow.conn.execute("SELECT 1").fetchall()  # a transaction is not sent again: the caller sees it


def test_a_read_that_fails_for_another_reason_is_not_sent_again(test_database, db):
    with test_database.transaction("u1", pipeline=True):
        pass
    calls = []

    def work(uow):
        calls.append(1)
        return uow.conn.execute("SELECT 1/0").fetchall()

    with pytest.raises(psycopg.errors.DivisionByZero):
        test_database.read("u1", work)
    assert len(calls) == 1


ADMIN_SHUTDOWN = "terminating connection due to administrator command"


def test_a_session_ended_by_the_server_before_its_socket_closed_is_a_503_and_a_read_is_sent_again(
    test_database, db
):
    """The server's FATAL message can reach psycopg before it sees the socket close: the connection
    still looks usable, but the error is the same lost connection (it escaped as a 500 before)."""
    with test_database.transaction("u1", pipeline=True):
        pass  # the connection is trusted: a read on it is sent again when it turns out dropped
    attempts = []

    def work(uow):
        attempts.append(uow.conn)
        if len(attempts) == 1:
            raise psycopg.errors.AdminShutdown(ADMIN_SHUTDOWN)
        return uow.conn.execute("SELECT 1 AS one").fetchone()

    assert test_database.read("u1", work) == {"one": 1}
    assert len(attempts) == 2 and attempts[0].closed and attempts[1] is not attempts[0]
    with pytest.raises(DatabaseUnavailable), test_database.transaction("u1", pipeline=True):
        raise psycopg.errors.AdminShutdown(ADMIN_SHUTDOWN)
    with pytest.raises(DatabaseUnavailable), test_database.transaction("u1"):
        raise psycopg.errors.AdminShutdown(ADMIN_SHUTDOWN)
