"""The idempotency records in PostgreSQL (gligabao.db.idempotency), as Powertools' idempotency
utility uses them: a key is taken once until it expires or its invocation is abandoned, another
payload under a live key is refused, a user never reads nor takes over another user's record, and
row-level security keeps each transaction to its user's rows."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import psycopg
import pytest
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
from conftest import count_rows
from psycopg import sql

from gligabao.db.idempotency import IdempotencyRecords

TTL_SECONDS = 3600
REMAINING_MS = 30_000


def records(database, user_id: str = "u1", ttl: int = TTL_SECONDS) -> IdempotencyRecords:
    """The store of `user_id`, configured as the API configures it."""
    store = IdempotencyRecords(database, user_id)
    store.configure(
        IdempotencyConfig(
            event_key_jmespath="[user_id, idempotency_key]",
            payload_validation_jmespath="request",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=ttl,
            hash_function="sha256",
        ),
        key_prefix="remember",
    )
    return store


def request(key: str = "k1", text: str = "Alice works at Acme.", user_id: str = "u1") -> dict:
    return {
        "user_id": user_id,
        "idempotency_key": key,
        "request": {"method": "POST", "path": "/v1/gb/remember", "body": {"user_id": user_id, "text": text}},
    }


def rows(db) -> list[tuple]:
    return db.execute(
        "SELECT user_id, status, response FROM gb_idempotency_records ORDER BY user_id"
    ).fetchall()


def test_a_key_is_taken_once_while_in_progress(db, test_database):
    store = records(test_database)
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)

    with pytest.raises(IdempotencyItemAlreadyExistsError) as caught:
        store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)

    held = caught.value.old_data_record
    assert held.status == "INPROGRESS"
    assert held.payload_hash == store._get_hashed_payload(request())
    assert 25 < held.in_progress_expiry_timestamp / 1000 - time.time() <= 30  # the invocation's time left
    assert TTL_SECONDS - 5 < held.expiry_timestamp - time.time() <= TTL_SECONDS
    assert rows(db) == [("u1", "INPROGRESS", None)]


def test_another_payload_under_a_live_key_is_refused(db, test_database):
    store = records(test_database)
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)

    with pytest.raises(IdempotencyValidationError):
        store.save_inprogress(request(text="Alice lives in Paris."), remaining_time_in_millis=REMAINING_MS)
    with pytest.raises(IdempotencyValidationError):
        store.get_record(request(text="Alice lives in Paris."))
    assert rows(db) == [("u1", "INPROGRESS", None)]


def test_a_completed_record_holds_the_response_until_it_expires(db, test_database):
    store = records(test_database)
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)
    store.save_success(request(), {"statusCode": 200, "body": '{"artifact_id": 1}'})

    record = store.get_record(request())

    assert record.status == "COMPLETED"
    assert record.response_json_as_dict() == {"statusCode": 200, "body": '{"artifact_id": 1}'}
    assert not record.is_expired


def test_an_expired_record_is_not_found_and_the_next_request_takes_the_key(db, test_database):
    store = records(test_database)
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)
    store.save_success(request(), {"statusCode": 200, "body": "{}"})
    db.execute("UPDATE gb_idempotency_records SET expires_at = now() - interval '1 second'")

    with pytest.raises(IdempotencyItemNotFoundError):
        store._get_record(store._get_hashed_idempotency_key(request()))
    store.save_inprogress(request(text="another text, now that the key expired"), REMAINING_MS)

    assert rows(db) == [("u1", "INPROGRESS", None)]


def test_an_abandoned_in_progress_record_is_taken_over(db, test_database):
    store = records(test_database)
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)
    # Its invocation ended (Lambda's timeout) without completing or deleting it.
    db.execute("UPDATE gb_idempotency_records SET in_progress_expires_at = now() - interval '1 second'")

    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)

    [(until,)] = db.execute("SELECT in_progress_expires_at > now() FROM gb_idempotency_records").fetchall()
    assert until is True


def test_a_completed_record_is_not_taken_over_when_its_in_progress_time_is_past(db, test_database):
    store = records(test_database)
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)
    store.save_success(request(), {"statusCode": 200, "body": "{}"})
    db.execute("UPDATE gb_idempotency_records SET in_progress_expires_at = now() - interval '1 second'")

    with pytest.raises(IdempotencyItemAlreadyExistsError) as caught:
        store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)

    assert caught.value.old_data_record.status == "COMPLETED"


def test_a_deleted_record_frees_the_key(db, test_database):
    store = records(test_database)
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)

    store.delete_record(request(), RuntimeError("the provider failed"))

    assert count_rows(db, "gb_idempotency_records") == 0
    store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)


def test_a_user_never_reads_deletes_or_takes_over_another_user_s_record(db, test_database):
    """Even under the very same hashed key (the API's keys also hash the user in)."""
    mine, theirs = records(test_database, "u1"), records(test_database, "u2")
    mine.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)
    mine.save_success(request(), {"statusCode": 200, "body": '{"secret": "u1"}'})
    key = mine._get_hashed_idempotency_key(request())

    with pytest.raises(IdempotencyItemNotFoundError):
        theirs._get_record(key)
    theirs._delete_record(DataRecord(key))
    theirs._put_record(DataRecord(key, "INPROGRESS", int(time.time()) + TTL_SECONDS, payload_hash="other"))

    assert rows(db) == [
        ("u1", "COMPLETED", '{"body": "{\\"secret\\": \\"u1\\"}", "statusCode": 200}'),
        ("u2", "INPROGRESS", None),
    ]


def test_one_user_s_key_and_another_s_same_key_are_two_records(db, test_database):
    mine, theirs = records(test_database, "u1"), records(test_database, "u2")

    mine.save_inprogress(request(user_id="u1"), remaining_time_in_millis=REMAINING_MS)
    theirs.save_inprogress(request(user_id="u2"), remaining_time_in_millis=REMAINING_MS)

    keys = [k for (k,) in db.execute("SELECT key FROM gb_idempotency_records ORDER BY user_id")]
    assert len(keys) == 2 and keys[0] != keys[1]  # the user is hashed into the key too


def test_concurrent_requests_with_one_key_take_it_once(db, test_database):
    store = records(test_database)
    start = threading.Barrier(8)

    def take(_):
        start.wait()
        try:
            store.save_inprogress(request(), remaining_time_in_millis=REMAINING_MS)
            return "taken"
        except IdempotencyItemAlreadyExistsError as exc:
            # The record comes with the refusal, unless it was committed after the statement
            # began: then Powertools reads it.
            return (exc.old_data_record or store.get_record(request())).status
        finally:
            test_database.close()  # this thread's connection

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = sorted(pool.map(take, range(8)))

    assert outcomes == ["INPROGRESS"] * 7 + ["taken"]
    assert count_rows(db, "gb_idempotency_records") == 1


def test_a_user_s_expired_records_are_deleted_by_the_user_s_next_put(db, test_database):
    for user in ("u1", "u2"):
        records(test_database, user).save_inprogress(request("old", user_id=user), REMAINING_MS)
    db.execute("UPDATE gb_idempotency_records SET expires_at = now() - interval '1 second'")

    records(test_database, "u1").save_inprogress(request("new"), remaining_time_in_millis=REMAINING_MS)

    assert rows(db) == [("u1", "INPROGRESS", None), ("u2", "INPROGRESS", None)]
    [(u2_expired,)] = db.execute("SELECT expires_at < now() FROM gb_idempotency_records WHERE user_id = 'u2'")
    assert u2_expired is True


# --- row-level security: the policy binds any role that is not a superuser, the owner included


@pytest.fixture
def app_role(db):
    """A role without superuser rights (the service's role on Aurora), allowed the table."""
    role = sql.Identifier(f"gb_idempotency_test_{uuid.uuid4().hex[:8]}")
    db.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(role))
    db.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON gb_idempotency_records TO {}").format(role))
    yield role
    db.execute(sql.SQL("DROP OWNED BY {}").format(role))
    db.execute(sql.SQL("DROP ROLE {}").format(role))


@contextmanager
def as_role(
    db: psycopg.Connection, role: sql.Identifier, user_id: str | None
) -> Iterator[psycopg.Connection]:
    """The tests' connection, for one transaction rolled back at the end, as `role` with the
    transaction's user set as the units of work set it."""
    with db.transaction(force_rollback=True):
        db.execute(sql.SQL("SET LOCAL ROLE {}").format(role))
        if user_id is not None:
            db.execute("SELECT set_config('gligabao.user_id', %s, true)", [user_id])
        yield db


def test_row_level_security_shows_a_transaction_only_its_user_s_records(db, test_database, app_role):
    records(test_database, "u1").save_inprogress(request(user_id="u1"), REMAINING_MS)
    records(test_database, "u2").save_inprogress(request(user_id="u2"), REMAINING_MS)

    with as_role(db, app_role, "u2") as conn:
        assert conn.execute("SELECT user_id FROM gb_idempotency_records").fetchall() == [("u2",)]
        assert conn.execute("UPDATE gb_idempotency_records SET status = 'COMPLETED'").rowcount == 1
        assert conn.execute("DELETE FROM gb_idempotency_records WHERE user_id = 'u1'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute(
                "INSERT INTO gb_idempotency_records (user_id, key, status, payload_hash, expires_at) "
                "VALUES ('u1', 'k', 'INPROGRESS', 'h', now())"
            )
    assert count_rows(db, "gb_idempotency_records") == 2


@pytest.mark.parametrize("user_id", [None, ""], ids=["never-set", "empty"])
def test_row_level_security_shows_nothing_without_a_user(db, test_database, app_role, user_id):
    records(test_database, "u1").save_inprogress(request(user_id="u1"), REMAINING_MS)

    with as_role(db, app_role, user_id) as conn:
        assert conn.execute("SELECT count(*) FROM gb_idempotency_records").fetchone() == (0,)


def test_the_table_forces_row_level_security_on_its_owner_too(db):
    assert db.execute(
        "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = 'gb_idempotency_records'"
    ).fetchone() == (True, True)
