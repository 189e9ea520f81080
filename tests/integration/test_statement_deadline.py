"""Every transaction of a request sets, in its first round trip, a statement timeout that ends
before the invocation does (the Lambda's remaining time less a margin): a statement that would
run past it is cut, its transaction rolled back (the dataset's lock released, nothing half
written) and the request answered 503 with a JSON error, never killed by Lambda mid-transaction."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import psycopg
import pytest
from conftest import count_rows
from remember_helpers import remember_handler
from sql_counting import counting_round_trips

from gligabao import bootstrap
from gligabao.db.connection import (
    STATEMENT_DEADLINE_MARGIN_SECONDS,
    DatabaseTimeout,
    statement_timeout_ms,
    statements_end_before,
)
from gligabao.local.containers import LambdaContext
from gligabao.local.server import build_event


def remember_event(text: str) -> dict:
    route = SimpleNamespace(path="/v1/gb/remember", method="ANY")
    body = json.dumps({"user_id": "u1", "text": text}).encode()
    return build_event(
        route, {}, "POST", "/v1/gb/remember", "", {"content-type": "application/json"}, body, "127.0.0.1"
    )


def timeout_ms(uow) -> int:
    """The transaction's statement_timeout, in milliseconds (0: none)."""
    return int(
        uow.conn.execute("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'").fetchone()[
            "setting"
        ]
    )


@pytest.mark.parametrize(
    "begin",
    [
        {},  # BEGIN and the user
        {"dataset": "main"},  # with the dataset's id
        {"dataset": "main", "lock_dataset": True},  # with the dataset's lock
        {"dataset": "main", "pipeline": True},
    ],
)
def test_a_transaction_sets_its_statement_timeout_before_the_deadline_in_its_first_round_trip(db, begin):
    database = bootstrap.bundle().database
    database.connection()  # opened (its types looked up) before anything is counted
    with (
        statements_end_before(time.monotonic() + 10),
        counting_round_trips() as round_trips,
        database.transaction("u1", **begin) as uow,
    ):
        if begin.get("pipeline"):
            uow.conn.execute("SELECT 1").fetchone()  # the pipeline's first wait
        first = round_trips.statements[0]
        left = timeout_ms(uow)

    assert "statement_timeout" in first, round_trips.statements
    assert (
        (10 - STATEMENT_DEADLINE_MARGIN_SECONDS - 1) * 1000
        < left
        <= (10 - STATEMENT_DEADLINE_MARGIN_SECONDS) * 1000
    )


def test_a_pipelined_transaction_on_a_trusted_connection_sets_it_with_the_user(db):
    database = bootstrap.bundle().database
    with database.transaction("u1"):
        pass  # the connection is now trusted: the next pipelined BEGIN travels with the statements
    with (
        statements_end_before(time.monotonic() + 10),
        counting_round_trips() as round_trips,
        database.transaction("u1", pipeline=True) as uow,
    ):
        left = timeout_ms(uow)

    assert "statement_timeout" in round_trips.statements[0]
    assert 8_000 < left <= 9_000


def test_without_a_deadline_the_servers_statement_timeout_stands(db):
    with bootstrap.bundle().database.transaction("u1", "main") as uow:
        assert timeout_ms(uow) == 0


def test_a_deadline_already_past_still_cuts_instead_of_turning_the_timeout_off(db):
    now = time.monotonic()
    with statements_end_before(now):
        assert statement_timeout_ms(now) == 1  # 0 would turn the timeout off
    # Reading the setting back would itself be cut by a 1 ms timeout on a slow machine: a
    # statement that outlasts it shows the cut instead, and would finish with the timeout off.
    with (
        pytest.raises(DatabaseTimeout),
        statements_end_before(time.monotonic()),
        bootstrap.bundle().database.transaction("u1") as uow,
    ):
        uow.conn.execute("SELECT pg_sleep(2)")


def test_a_remember_cut_by_the_deadline_is_a_503_that_releases_the_dataset_and_writes_nothing(
    db, admin_database_url, models
):
    handler = remember_handler()
    assert (
        handler(remember_event("Alice works at Acme."), LambdaContext("remember", "r0"))["statusCode"] == 200
    )
    before = {table: count_rows(db, table) for table in ("gb_artifacts", "gb_entities", "gb_edges")}

    # Another transaction holds the facts' table: remember takes the dataset's lock, then waits
    # to insert its fact, past its statement timeout (5 s left, less the margin).
    with psycopg.connect(admin_database_url) as blocker:
        blocker.execute("LOCK TABLE gb_edges IN SHARE MODE")
        started = time.monotonic()
        result = handler(
            remember_event("Bob works at Initech."), LambdaContext("remember", "r1", timeout_ms=5_000)
        )
        took = time.monotonic() - started

        assert result["statusCode"] == 503, result
        assert result["headers"]["Content-Type"] == "application/json"
        assert json.loads(result["body"]) == {"error": "the database did not answer in time; try again"}
        assert "Traceback" not in result["body"]
        assert took < 5 - STATEMENT_DEADLINE_MARGIN_SECONDS / 2
        # the dataset's lock was released: another transaction takes it at once
        with psycopg.connect(admin_database_url) as other:
            other.execute("SET lock_timeout = '100ms'")
            other.execute("SELECT id FROM gb_datasets WHERE user_id = 'u1' AND name = 'main' FOR UPDATE")
        assert {table: count_rows(db, table) for table in before} == before  # nothing half written
        blocker.rollback()

    # a second remember on the same dataset, from another connection, then proceeds
    with ThreadPoolExecutor(max_workers=1) as pool:
        second = pool.submit(
            handler, remember_event("Carol works at Globex."), LambdaContext("remember", "r2")
        )
        assert second.result(timeout=30)["statusCode"] == 200
    assert count_rows(db, "gb_edges") == before["gb_edges"] + 1
