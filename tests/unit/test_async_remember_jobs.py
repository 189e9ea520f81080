"""The jobs of asynchronous remembers, without a database: the message format (anything else is a
poison message, never retried), the retry backoff, and the local runtime's queue (SQS FIFO's
order, retries, dead letters and deduplication, in-process)."""

from __future__ import annotations

import json

import pytest

from gligabao.local.job_queue import LocalJobQueue
from gligabao.memory.async_remember import PoisonMessage, RememberJob, retry_delay_seconds


def test_a_job_survives_its_message_body():
    job = RememberJob(7, "u1", {"extract": "low"}, {"extract": "claude-x"})

    assert RememberJob.from_body(job.body()) == job


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        "null",
        '{"artifact_id": "7", "user_id": "u1"}',
        '{"artifact_id": true, "user_id": "u1"}',
        '{"artifact_id": 7, "user_id": ""}',
        '{"artifact_id": 7}',
        '{"artifact_id": 7, "user_id": "u1", "models": []}',
    ],
)
def test_anything_but_a_job_is_a_poison_message(body):
    with pytest.raises(PoisonMessage):
        RememberJob.from_body(body)


def test_the_backoff_doubles_from_the_base_up_to_the_longest():
    assert [retry_delay_seconds(attempt, 30, 900) for attempt in range(1, 8)] == [
        30,
        60,
        120,
        240,
        480,
        900,
        900,
    ]


class Recorder:
    """A worker handler that fails the messages `fail` says, and records the order of delivery."""

    def __init__(self, fail=lambda body, attempt: False):
        self.delivered: list[tuple[str, int]] = []
        self.fail = fail

    def __call__(self, event, context):
        [record] = event["Records"]
        attempt = int(record["attributes"]["ApproximateReceiveCount"])
        self.delivered.append((record["body"], attempt))
        failed = self.fail(record["body"], attempt)
        return {"batchItemFailures": [{"itemIdentifier": record["messageId"]}] if failed else []}


def _queue(handler, max_attempts=3) -> LocalJobQueue:
    return LocalJobQueue(handler, max_attempts=max_attempts, default_retry_s=0)


def test_the_local_queue_delivers_a_group_in_order_and_holds_it_while_its_head_is_retried():
    handler = Recorder(fail=lambda body, attempt: body == "a1" and attempt == 1)
    queue = _queue(handler)
    try:
        queue.enqueue("a", [("1", "a1"), ("2", "a2")])
        assert queue.wait_until_empty(10)
    finally:
        queue.stop()

    assert handler.delivered == [("a1", 1), ("a1", 2), ("a2", 1)]


def test_the_local_queue_dead_letters_a_message_after_max_attempts_and_goes_on():
    handler = Recorder(fail=lambda body, attempt: body == "bad")
    queue = _queue(handler, max_attempts=2)
    try:
        queue.enqueue("g", [("1", "bad"), ("2", "good")])
        assert queue.wait_until_empty(10)
    finally:
        queue.stop()

    assert [m.body for m in queue.dead_letters] == ["bad"]
    assert handler.delivered == [("bad", 1), ("bad", 2), ("good", 1)]


def test_the_local_queue_queues_a_deduplication_id_once():
    handler = Recorder()
    queue = _queue(handler)
    try:
        queue.enqueue("g", [("7", json.dumps({"n": 1}))])
        queue.enqueue("g", [("7", json.dumps({"n": 2}))])
        assert queue.wait_until_empty(10)
    finally:
        queue.stop()

    assert handler.delivered == [('{"n": 1}', 1)]
