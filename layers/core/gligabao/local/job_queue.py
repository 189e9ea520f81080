"""The job queue of `gligabao serve`: SQS FIFO's behaviour in-process, so asynchronous and batch
remembers work without AWS.

A thread drains the queue and calls the same worker handler as the Lambda (api/worker.py) with
SQS-shaped events, one record each. Like SQS FIFO: a message group's messages are delivered one
at a time in the order sent (a group waits while its head is retried, other groups go on); a
record the handler reports failed comes back after the backoff it set (`retry_after`), and after
`max_attempts` receives it moves to `dead_letters` (the dead-letter queue); a deduplication id
seen before is not queued again.

Like SQS, the queue outlives the server: with a `store` (a JSON file; `gligabao serve` keeps one per
database), every change is written there before the change is acted on, and a new queue on the
same store takes the messages up again. A message that was in flight when the server stopped is
delivered again at once (its attempt counted, as SQS counts a receive whose consumer died), and
one waiting for a retry keeps its due time.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gligabao.local.server import LambdaContext
from gligabao.observability.logging import get_logger

WORKER_TIMEOUT_MS = 300_000  # the worker function's Timeout in template.yaml
DEFAULT_RETRY_S = 30.0  # a failed record's wait when the handler set no backoff (SQS: the visibility timeout)

STORE_VERSION = 1
# What the store keeps of a message, besides whether it was in flight and when it is due.
STORED_FIELDS = ("group", "dedup_id", "body", "message_id", "receive_count", "sent_ms")

logger = get_logger()


@dataclass
class QueuedMessage:
    group: str
    dedup_id: str
    body: str
    message_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    receive_count: int = 0
    visible_at: float = 0.0
    receipt: str | None = None
    backoff_set: bool = False
    sent_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    in_flight: bool = False


class LocalJobQueue:
    def __init__(
        self,
        handler: Callable[[dict, Any], dict],
        *,
        max_attempts: int,
        default_retry_s: float = DEFAULT_RETRY_S,
        clock=time.monotonic,
        store: Path | None = None,
        wall_clock=time.time,
    ):
        self._handler = handler
        self._default_retry_s = default_retry_s
        self._max_attempts = max_attempts
        self._clock = clock
        self._wall_clock = wall_clock
        self._store_lock = _lock_store(store) if store else None
        self._store = store if self._store_lock else None
        self._messages: list[QueuedMessage] = self._load() if self._store else []
        self._seen: set[str] = {message.dedup_id for message in self._messages}
        self._stopped = False
        self._changed = threading.Condition()
        self.dead_letters: list[QueuedMessage] = []
        self.delivered = 0
        self._thread = threading.Thread(target=self._drain_forever, name="gligabao-jobs", daemon=True)
        self._thread.start()

    # --- memory.ports.JobQueue ------------------------------------------------------------------

    def enqueue(self, group: str, messages: list[tuple[str, str]]) -> None:
        """Queue the messages, or none of them (raising) when the store cannot be written."""
        with self._changed:
            new: dict[str, QueuedMessage] = {}
            for dedup_id, body in messages:
                if dedup_id not in self._seen and dedup_id not in new:
                    new[dedup_id] = QueuedMessage(group, dedup_id, body)
            self._messages.extend(new.values())
            try:
                self._save()
            except OSError:
                del self._messages[len(self._messages) - len(new) :]
                raise
            self._seen.update(new)
            self._changed.notify_all()

    def retry_after(self, receipt: str, seconds: int) -> None:
        with self._changed:
            for message in self._messages:
                if message.receipt == receipt:
                    message.visible_at = self._clock() + seconds
                    message.backoff_set = True
            self._save_or_log()
            self._changed.notify_all()

    # --- for the tests, the bench and stopping ----------------------------------------------------

    def wait_until_empty(self, timeout: float) -> bool:
        """True once every message is done or dead-lettered, False after `timeout` seconds."""
        end = time.monotonic() + timeout
        with self._changed:
            while self._messages:  # a message in flight is still among them
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.5))
            return True

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify_all()
        self._thread.join(timeout=5)
        if self._store_lock:
            self._store_lock.close()  # the next server on this database takes the store up

    # --- the worker thread --------------------------------------------------------------------------

    def _next(self) -> tuple[QueuedMessage | None, float]:
        """The first visible message at the head of its group, else None and how long to wait."""
        now, heads, wait = self._clock(), set(), 1.0
        for message in self._messages:
            if message.group in heads:
                continue
            heads.add(message.group)
            if message.visible_at <= now:
                return message, 0.0
            wait = min(wait, message.visible_at - now)
        return None, wait

    def _drain_forever(self) -> None:
        while True:
            with self._changed:
                message, wait = self._next()
                while message is None and not self._stopped:
                    self._changed.wait(wait)
                    message, wait = self._next()
                if self._stopped:
                    return
                message.receive_count += 1
                message.receipt = str(uuid.uuid4())
                message.backoff_set = False
                message.visible_at = self._clock() + WORKER_TIMEOUT_MS / 1000
                message.in_flight = True
                self._save_or_log()
            failed = self._deliver(message)
            with self._changed:
                message.in_flight = False
                self.delivered += 1
                if not failed:
                    self._messages.remove(message)
                elif message.receive_count >= self._max_attempts:
                    self._messages.remove(message)
                    self.dead_letters.append(message)
                elif not message.backoff_set:
                    message.visible_at = self._clock() + self._default_retry_s
                self._save_or_log()
                self._changed.notify_all()

    # --- the store ---------------------------------------------------------------------------------

    def _save(self) -> None:
        """Write the messages to the store (a new file renamed over the old, so a crash leaves one
        or the other whole), due times as wall-clock times. Called with the lock held."""
        if self._store is None:
            return
        now, wall = self._clock(), self._wall_clock()
        messages = [
            {
                **{name: getattr(m, name) for name in STORED_FIELDS},
                "in_flight": m.in_flight,
                "due": wall + max(0.0, m.visible_at - now),
            }
            for m in self._messages
        ]
        partial = self._store.with_name(self._store.name + ".partial")
        # Readable by the server's user only: the messages name the users whose texts wait.
        with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
            file.write(json.dumps({"v": STORE_VERSION, "messages": messages}))
        os.replace(partial, self._store)

    def _save_or_log(self) -> None:
        """The queue's own changes: a store that cannot be written (a full disk) is logged and the
        queue goes on in memory; only a new message's write must succeed (`enqueue` raises, and the
        remember answers 503)."""
        try:
            self._save()
        except OSError:
            logger.exception(
                "local job queue: the store could not be written", extra={"store": str(self._store)}
            )

    def _load(self) -> list[QueuedMessage]:
        """The messages of the store: none when there is none yet; an unreadable store is set
        aside (renamed `.unreadable`, logged) rather than stopping the server."""
        try:
            data = json.loads(self._store.read_text())
            if data.get("v") != STORE_VERSION:
                raise ValueError(f"store version {data.get('v')!r}")
            now, wall = self._clock(), self._wall_clock()
            return [
                QueuedMessage(
                    **{name: m[name] for name in STORED_FIELDS},
                    visible_at=now if m["in_flight"] else now + max(0.0, m["due"] - wall),
                )
                for m in data["messages"]
            ]
        except FileNotFoundError:
            return []
        except (ValueError, TypeError, KeyError, AttributeError):
            aside = self._store.with_name(self._store.name + ".unreadable")
            logger.exception("local job queue: unreadable store, set aside", extra={"store": str(aside)})
            os.replace(self._store, aside)
            return []

    def _deliver(self, message: QueuedMessage) -> bool:
        """Call the worker with a one-record SQS event; True when the record failed."""
        event = {"Records": [sqs_record(message)]}
        context = LambdaContext("remember-worker", str(uuid.uuid4()), timeout_ms=WORKER_TIMEOUT_MS)
        try:
            reply = self._handler(event, context) or {}
        except Exception:
            logger.exception("remember.job.invocation_failed")
            return True
        return any(f.get("itemIdentifier") == message.message_id for f in reply.get("batchItemFailures", []))


def _lock_store(store: Path):
    """The store's lock file, held for the queue's life; None when another server on the same
    database holds it: this one's queue then lives in memory only (logged), as two servers' queues
    writing one store would each overwrite the other's messages."""
    store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = open(store.with_name(store.name + ".lock"), "a")  # noqa: SIM115 (held until stop)
    try:
        import fcntl  # not on Windows: there the store is not locked
    except ImportError:
        return lock
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        logger.warning(
            "local job queue: another server keeps this database's jobs; this one's live in memory",
            extra={"store": str(store)},
        )
        return None
    return lock


def sqs_record(message: QueuedMessage) -> dict:
    """The record of an SQS FIFO event source, as Lambda delivers it."""
    return {
        "messageId": message.message_id,
        "receiptHandle": message.receipt,
        "body": message.body,
        "attributes": {
            "ApproximateReceiveCount": str(message.receive_count),
            "SentTimestamp": str(message.sent_ms),
            "SenderId": "local",
            "ApproximateFirstReceiveTimestamp": str(message.sent_ms),
            "SequenceNumber": "0",
            "MessageGroupId": message.group,
            "MessageDeduplicationId": message.dedup_id,
        },
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:local:000000000000:gligabao-jobs.fifo",
        "awsRegion": "local",
    }
