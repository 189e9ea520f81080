"""Idempotent remember, through the remember handler in-process (the handler the Lambda runs): a
retry while the first request runs is a 409 and stores nothing; each request, a replay or a 409
included, ends with its one monitoring event; the records' failures never lose a response nor
become a 500."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import count_rows, reconfigure
from remember_helpers import call_handler, remember_handler, rule_based_model
from sql_counting import counting_round_trips

from gligabao.db.connection import Database

ALICE = {"user_id": "u1", "text": "Alice works at Acme."}
KEY = {"Idempotency-Key": "chat-42/message-7"}


@pytest.fixture
def handler():
    return remember_handler()


def events(capsys) -> list[dict]:
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("message", "").startswith("remember.")]


def test_a_retry_while_the_first_request_runs_is_409_and_the_text_is_stored_once(handler, db, models):
    fake_anthropic, _ = models
    extracting, release = threading.Event(), threading.Event()

    def slow_model(body):
        extracting.set()
        release.wait(30)
        return rule_based_model(body)

    fake_anthropic.responder = slow_model
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(call_handler, handler, ALICE, headers=KEY)
        assert extracting.wait(30)

        retry = call_handler(handler, ALICE, headers=KEY)
        release.set()
        first_reply = first.result(timeout=30)

    assert retry.status == 409
    assert retry.json == {"error": "a request with this Idempotency-Key is still in progress: retry it later"}
    assert retry.headers["Retry-After"] == "2"
    assert first_reply.status == 200
    assert len(fake_anthropic.messages) == 1
    assert count_rows(db, "gb_artifacts") == 1
    later = call_handler(handler, ALICE, headers=KEY)
    assert later.status == 200 and later.json == first_reply.json
    assert later.headers["Idempotent-Replayed"] == "true"


def test_each_request_ends_with_one_event_and_a_replay_s_says_so(handler, db, models, capsys):
    capsys.readouterr()

    call_handler(handler, ALICE, headers=KEY)
    call_handler(handler, ALICE, headers=KEY)
    call_handler(handler, {**ALICE, "text": "Alice lives in Paris."}, headers=KEY)

    first, replay, conflict = events(capsys)
    assert first["event"] == "remember.ok" and "replayed" not in first["counts"]
    assert first["input_tokens"] > 0
    assert replay["event"] == "remember.ok" and replay["status"] == 200
    assert replay["counts"] == {"replayed": 1}
    assert replay["user_id"] == "u1"
    assert (replay["input_tokens"], replay["output_tokens"], replay["cost_usd"]) == (0, 0, 0.0)
    assert conflict["event"] == "remember.error" and conflict["status"] == 409
    assert conflict["error"] == "Idempotency-Key was already used with another request body"


def test_a_bad_key_ends_with_one_400_event(handler, db, models, capsys):
    capsys.readouterr()

    reply = call_handler(handler, ALICE, headers={"Idempotency-Key": "x" * 256})

    assert reply.status == 400
    [event] = events(capsys)
    assert event["status"] == 400 and "Idempotency-Key" in event["error"]


def test_without_a_lambda_context_a_key_is_held_at_most_the_longest_invocation(handler, db, models):
    fake_anthropic, _ = models
    held = []

    def look_at_the_record(body):
        held.append(
            db.execute(
                "SELECT status, extract(epoch FROM in_progress_expires_at - now()) FROM gb_idempotency_records"
            ).fetchone()
        )
        return rule_based_model(body)

    fake_anthropic.responder = look_at_the_record
    call_handler(handler, ALICE, headers=KEY)

    [(status, seconds)] = held
    assert status == "INPROGRESS"
    assert 14 * 60 < seconds <= 15 * 60


def test_an_unreachable_database_is_503_before_any_model_call(handler, db, models):
    reconfigure(database=Database(lambda: "postgresql://gb:pw@127.0.0.1:9/x?connect_timeout=1"))

    reply = call_handler(handler, ALICE, headers=KEY)

    assert reply.status == 503
    assert reply.json == {"error": "database unavailable"}
    assert models[0].requests == [] and models[1].requests == []


@pytest.fixture
def responses_cannot_be_recorded(db):
    """The database refuses to complete a record (a failover at the wrong moment)."""
    db.execute(
        """CREATE FUNCTION gb_test_refuse() RETURNS trigger LANGUAGE plpgsql AS
           $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
           CREATE TRIGGER gb_test_refuse BEFORE UPDATE ON gb_idempotency_records
           FOR EACH ROW EXECUTE FUNCTION gb_test_refuse()"""
    )
    yield
    db.execute("DROP TRIGGER gb_test_refuse ON gb_idempotency_records; DROP FUNCTION gb_test_refuse()")


def test_a_response_that_cannot_be_recorded_is_still_answered(
    handler, db, models, responses_cannot_be_recorded
):
    reply = call_handler(handler, ALICE, headers=KEY)

    assert reply.status == 200 and reply.json["artifact_id"] == 1
    assert count_rows(db, "gb_artifacts") == 1
    # The record stays in progress until the invocation's time is over: a retry meanwhile is a 409.
    assert call_handler(handler, ALICE, headers=KEY).status == 409


def test_a_key_costs_six_round_trips_and_a_replay_three_in_all(handler, db, models):
    call_handler(handler, {**ALICE, "dataset": "warm-up"})  # connections and clients opened
    with counting_round_trips(this_thread_only=True) as plain:
        call_handler(handler, {**ALICE, "dataset": "plain"})
    with counting_round_trips(this_thread_only=True) as keyed:
        call_handler(handler, {**ALICE, "dataset": "keyed"}, headers=KEY)
    with counting_round_trips(this_thread_only=True) as replay:
        call_handler(handler, {**ALICE, "dataset": "keyed"}, headers=KEY)

    # Taking the key, then completing it: BEGIN with the user, the statement, COMMIT each.
    assert keyed.count == plain.count + 6
    assert replay.count == 3
