"""The jobs of asynchronous remembers, without a database: the message format (anything else is a
poison message, never retried), the retry backoff, and the local runtime's queue (SQS FIFO's
order, retries, dead letters and deduplication, in-process)."""

from __future__ import annotations

import json
import shutil
import stat
import threading
import time

import pytest

from gligabao.local.job_queue import LocalJobQueue
from gligabao.memory.async_remember import retry_delay_seconds
from gligabao.memory.remember_job import PoisonMessage, RememberJob


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


class Held(Recorder):
    """A worker handler that holds its first delivery until released, as a server that stops
    while a job runs."""

    def __init__(self):
        super().__init__()
        self.running, self.release = threading.Event(), threading.Event()

    def __call__(self, event, context):
        self.running.set()
        self.release.wait(10)
        return super().__call__(event, context)


def test_the_queue_takes_its_messages_up_again_after_the_server_stopped(tmp_path):
    store, stopped_with = tmp_path / "jobs.json", tmp_path / "as-the-server-stopped.json"
    held = Held()
    first = LocalJobQueue(held, max_attempts=3, default_retry_s=0, store=store)
    try:
        first.enqueue("a", [("1", "a1"), ("2", "a2")])
        first.enqueue("b", [("3", "b1")])
        assert held.running.wait(10)
        shutil.copy(store, stopped_with)  # the store as it is while "a1" is in flight
    finally:
        held.release.set()
        first.stop()

    handler = Recorder()
    second = LocalJobQueue(handler, max_attempts=3, default_retry_s=0, store=stopped_with)
    try:
        second.enqueue("a", [("1", "a1 sent again")])  # a deduplication id it knows
        assert second.wait_until_empty(10)
    finally:
        second.stop()

    assert handler.delivered == [("a1", 2), ("a2", 1), ("b1", 1)]  # a1's interrupted receive counts
    assert json.loads(stopped_with.read_text())["messages"] == []
    assert stat.S_IMODE(store.stat().st_mode) == 0o600  # the messages name users: the server's user only


def test_a_message_waiting_for_its_retry_keeps_its_due_time_across_a_restart(tmp_path):
    store = tmp_path / "jobs.json"
    failing = Recorder(fail=lambda body, attempt: True)
    first = LocalJobQueue(failing, max_attempts=3, default_retry_s=3600, store=store)
    try:
        first.enqueue("g", [("1", "later")])
        assert _eventually(lambda: first.delivered == 1)
    finally:
        first.stop()
    [saved] = json.loads(store.read_text())["messages"]
    assert 3590 < saved["due"] - time.time() <= 3600

    early, due = Recorder(), Recorder()
    before_due = LocalJobQueue(early, max_attempts=3, store=store, wall_clock=lambda: time.time() + 3500)
    try:
        assert not before_due.wait_until_empty(0.5)
    finally:
        before_due.stop()
    after_due = LocalJobQueue(due, max_attempts=3, store=store, wall_clock=lambda: time.time() + 3700)
    try:
        assert after_due.wait_until_empty(10)
    finally:
        after_due.stop()

    assert early.delivered == []
    assert due.delivered == [("later", 2)]


@pytest.mark.parametrize("content", ["not json", '{"v": 99, "messages": []}', '{"v": 1, "messages": [{}]}'])
def test_an_unreadable_store_is_set_aside_and_the_queue_starts_empty(tmp_path, content):
    store = tmp_path / "jobs.json"
    store.write_text(content)
    handler = Recorder()
    queue = LocalJobQueue(handler, max_attempts=3, store=store)
    try:
        queue.enqueue("g", [("1", "new")])
        assert queue.wait_until_empty(10)
    finally:
        queue.stop()

    assert handler.delivered == [("new", 1)]
    assert (tmp_path / "jobs.json.unreadable").read_text() == content


def _eventually(condition, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_serve_keeps_one_store_per_database_named_without_its_password(tmp_path):
    from gligabao.local.cli import jobs_store

    def store(url: str, identity: str = "cluster-1/16384"):
        return jobs_store(str(tmp_path), url, identity)

    here = store("postgresql://gb:first-secret@db.example/gb")

    assert here.parent == tmp_path / "jobs"
    assert store("postgresql://gb:rotated-secret@db.example/gb") == here
    assert store("postgresql://gb:first-secret@db.example/other") != here
    assert store("postgresql://gb:first-secret@elsewhere.example/gb") != here
    assert store("postgresql://gb:first-secret@db.example/gb", "cluster-2/16384") != here
    assert "secret" not in str(here)


def test_a_store_that_cannot_be_written_refuses_new_messages_and_the_queue_goes_on(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    handler = Recorder(fail=lambda body, attempt: attempt == 1)
    queue = LocalJobQueue(handler, max_attempts=3, default_retry_s=0, store=tmp_path / "jobs.json")
    try:
        queue.enqueue("g", [("1", "first")])
        queue._store = blocked / "jobs.json"  # its directory is a file now: every write fails
        with pytest.raises(OSError):
            queue.enqueue("g", [("2", "second")])
        assert queue.wait_until_empty(10)
    finally:
        queue.stop()

    assert handler.delivered == [("first", 1), ("first", 2)]  # its retry ran, unsaved; "second" never


def test_a_second_server_on_the_same_database_keeps_its_queue_in_memory(tmp_path):
    store = tmp_path / "jobs.json"
    held = Held()
    first = LocalJobQueue(held, max_attempts=3, store=store)
    second_handler = Recorder()
    second = LocalJobQueue(second_handler, max_attempts=3, store=store)
    try:
        first.enqueue("g", [("1", "first's")])
        assert held.running.wait(10)
        second.enqueue("g", [("2", "second's")])
        assert second.wait_until_empty(10)
        saved = json.loads(store.read_text())["messages"]
    finally:
        held.release.set()
        first.stop()
        second.stop()

    assert second_handler.delivered == [("second's", 1)]  # its own, not the first's
    assert [m["body"] for m in saved] == ["first's"]  # the second wrote nothing over it
    third_held = Held()
    third = LocalJobQueue(third_held, max_attempts=3, store=store)  # the first stopped: the store is free
    try:
        third.enqueue("g", [("3", "third's")])
        assert third_held.running.wait(10)
        assert [m["body"] for m in json.loads(store.read_text())["messages"]] == ["third's"]
    finally:
        third_held.release.set()
        third.stop()
