"""Idempotent remember (SPEC section 13): with an `Idempotency-Key` header, a retry of the same
request gets the first response, status and body, without a model call or a stored row; the key
with another body is 409; only what a retry would get again is replayed, never a 5xx; keys belong
to their user and expire."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import count_rows, reconfigure
from fakes.anthropic_server import Reply
from graph_rows import graph_counts, nothing_stored

ALICE = {"user_id": "u1", "text": "Alice works at Acme.", "session_id": "s1"}
KEY = {"Idempotency-Key": "remember-7f3a"}


def post(api, body: dict, headers: dict | None = KEY):
    return api.post("/v1/gb/remember", body, headers=headers)


def calls(models) -> tuple[int, int]:
    fake_anthropic, fake_openai = models
    return len(fake_anthropic.requests), len(fake_openai.requests)


def stored(db) -> dict[str, int]:
    return {**graph_counts(db), "gb_inferences": count_rows(db, "gb_inferences")}


def replayed(reply) -> bool:
    return reply.headers.get("idempotent-replayed") == "true"


def test_a_retry_with_the_same_key_and_body_gets_the_first_response_without_a_model_call(api, db, models):
    first = post(api, ALICE)
    calls_after_first, rows_after_first = calls(models), stored(db)

    retry = post(api, ALICE)

    assert first.status == retry.status == 200
    assert retry.raw == first.raw
    assert retry.headers["content-type"] == first.headers["content-type"] == "application/json"
    assert replayed(retry) and not replayed(first)
    assert calls(models) == calls_after_first
    assert stored(db) == rows_after_first
    assert rows_after_first["gb_artifacts"] == 1 and rows_after_first["gb_inferences"] == 2


def test_the_same_body_in_another_key_order_and_spacing_is_the_same_request(api, db, models):
    first = post(api, ALICE)

    retry = api.post(
        "/v1/gb/remember",
        raw=b'{ "session_id": "s1",  "text": "Alice works at Acme.", "user_id": "u1" }',
        headers=KEY,
    )

    assert retry.status == 200 and replayed(retry)
    assert retry.raw == first.raw
    assert count_rows(db, "gb_artifacts") == 1


def test_the_same_key_with_another_body_is_409_and_changes_nothing(api, db, models):
    first = post(api, ALICE)
    calls_after_first, rows_after_first = calls(models), stored(db)

    other = post(api, {**ALICE, "text": "Alice lives in Paris."})

    assert other.status == 409
    assert other.json == {"error": "Idempotency-Key was already used with another request body"}
    assert calls(models) == calls_after_first
    assert stored(db) == rows_after_first
    assert post(api, ALICE).raw == first.raw  # the first response is still the key's


def test_a_key_of_one_user_never_replays_for_another_user(api, db, models):
    first = post(api, ALICE)

    other_user = post(api, {**ALICE, "user_id": "u2"})

    assert other_user.status == 200 and not replayed(other_user)
    assert other_user.raw != first.raw
    assert calls(models) == (2, 2)  # u2's text was extracted and embedded
    assert sorted(u for (u,) in db.execute("SELECT user_id FROM gb_datasets")) == ["u1", "u2"]
    assert sorted(u for (u,) in db.execute("SELECT user_id FROM gb_idempotency_records")) == ["u1", "u2"]
    assert replayed(post(api, ALICE)) and replayed(post(api, {**ALICE, "user_id": "u2"}))


def test_two_concurrent_requests_with_one_key_store_once(api, db, models):
    start = threading.Barrier(2)

    def send(_):
        start.wait()
        return post(api, ALICE)

    with ThreadPoolExecutor(max_workers=2) as pool:
        replies = list(pool.map(send, range(2)))

    firsts = [reply for reply in replies if reply.status == 200 and not replayed(reply)]
    assert len(firsts) == 1
    [other] = [reply for reply in replies if reply is not firsts[0]]
    if other.status == 200:
        assert replayed(other) and other.raw == firsts[0].raw
    else:
        assert other.status == 409 and "in progress" in other.json["error"]
    assert count_rows(db, "gb_artifacts") == 1
    assert calls(models) == (1, 1)


@pytest.mark.parametrize(
    ("failure", "times"),
    [(Reply.error(500), 3), (Reply(text="I cannot find any JSON to give you."), 1)],
    ids=["provider-500", "unparseable"],
)
def test_a_502_is_not_replayed_the_retry_calls_the_model_again(api, db, models, failure, times):
    fake_anthropic, _ = models
    fake_anthropic.queue(failure, times=times)  # the SDK retries a 500 twice
    failed = post(api, ALICE)
    assert failed.status == 502 and nothing_stored(db)
    assert count_rows(db, "gb_idempotency_records") == 0
    messages_after_failure = len(fake_anthropic.messages)

    retry = post(api, ALICE)

    assert retry.status == 200 and not replayed(retry)
    assert len(fake_anthropic.messages) == messages_after_failure + 1
    assert count_rows(db, "gb_artifacts") == 1
    assert replayed(post(api, ALICE))


def test_a_503_is_not_replayed(api, db, models):
    reconfigure(anthropic_api_key=None)
    assert post(api, ALICE).status == 503
    reconfigure(anthropic_api_key="sk-ant-test-key")

    retry = post(api, ALICE)

    assert retry.status == 200 and not replayed(retry)
    assert count_rows(db, "gb_artifacts") == 1


def test_a_400_is_replayed_and_stores_nothing_either_time(api, db, models):
    first = post(api, {"user_id": "u1", "text": "   "})

    retry = post(api, {"user_id": "u1", "text": "   "})

    assert first.status == retry.status == 400
    assert retry.raw == first.raw and replayed(retry)
    assert nothing_stored(db) and calls(models) == (0, 0)


def test_an_expired_key_runs_again(api, db, models):
    first = post(api, ALICE)
    db.execute("UPDATE gb_idempotency_records SET expires_at = now() - interval '1 second'")

    retry = post(api, ALICE)

    assert retry.status == 200 and not replayed(retry)
    assert retry.raw != first.raw  # a second artifact
    assert count_rows(db, "gb_artifacts") == 2
    assert calls(models) == (2, 2)
    assert count_rows(db, "gb_idempotency_records") == 1
    assert replayed(post(api, ALICE))


def test_keys_expire_after_the_configured_time(api, db, models):
    reconfigure(limits={"idempotency_ttl_seconds": 90})

    post(api, ALICE)

    [(seconds,)] = db.execute(
        "SELECT extract(epoch FROM expires_at - now()) FROM gb_idempotency_records"
    ).fetchall()
    assert 80 < seconds <= 90


def test_keys_expire_after_24_hours_by_default(api, db, models):
    post(api, ALICE)

    [(hours,)] = db.execute(
        "SELECT extract(epoch FROM expires_at - now()) / 3600 FROM gb_idempotency_records"
    )
    assert 23.9 < hours <= 24


def test_the_expired_keys_of_the_user_are_deleted_by_the_user_s_next_keyed_request(api, db, models):
    post(api, ALICE, {"Idempotency-Key": "old"})
    post(api, {**ALICE, "user_id": "u2"}, {"Idempotency-Key": "old"})
    db.execute("UPDATE gb_idempotency_records SET expires_at = now() - interval '1 second'")

    post(api, ALICE, {"Idempotency-Key": "new"})

    assert db.execute("SELECT user_id FROM gb_idempotency_records ORDER BY user_id").fetchall() == [
        ("u1",),
        ("u2",),  # u2's expired key waits for u2
    ]


@pytest.mark.parametrize(
    "value",
    ["", "k" * 256, "clé", "tab\there"],
    ids=["empty", "256-characters", "not-ascii", "control-character"],
)
def test_a_bad_key_is_400_before_anything_runs(api, db, models, value):
    reply = post(api, ALICE, {"Idempotency-Key": value})

    assert reply.status == 400
    assert reply.json == {"error": "Idempotency-Key must be 1 to 255 printable ASCII characters"}
    assert nothing_stored(db) and calls(models) == (0, 0)
    assert count_rows(db, "gb_idempotency_records") == 0


def test_a_key_of_255_printable_characters_is_accepted(api, db, models):
    key = ("a-Z 0~!" * 40)[:255]

    assert post(api, ALICE, {"Idempotency-Key": key}).status == 200
    assert replayed(post(api, ALICE, {"Idempotency-Key": key}))


def test_without_the_header_every_request_runs(api, db, models):
    first = post(api, ALICE, headers=None)
    second = post(api, ALICE, headers=None)

    assert first.status == second.status == 200
    assert not replayed(second)
    assert count_rows(db, "gb_artifacts") == 2
    assert calls(models) == (2, 2)
    assert count_rows(db, "gb_idempotency_records") == 0


def test_other_routes_ignore_the_header(api, db, models):
    reply = api.get("/v1/gb/datasets?user_id=u1", headers={"Idempotency-Key": "clé"})

    assert reply.status == 200
