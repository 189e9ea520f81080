"""The local job queue, shared with the worker processes of `gligabao serve --workers N`.

The queue (local/job_queue.py) lives in the server's process; a worker's remember enqueues on it
and the remember worker's retries set its backoff, through a connection to this link (a local
socket with a random key), as the functions reach SQS on AWS.
"""

from __future__ import annotations

import os
import threading
from multiprocessing.connection import Client, Listener

from gligabao.observability.logging import get_logger


class JobQueueLink:
    """Serves `queue.enqueue` and `queue.retry_after` to the worker processes."""

    def __init__(self, queue):
        self._queue = queue
        self._key = os.urandom(32)
        self._listener = Listener(("127.0.0.1", 0), authkey=self._key)
        self._closed = False
        threading.Thread(target=self._accept_forever, name="gligabao-jobs-link", daemon=True).start()

    @property
    def address_and_key(self) -> tuple[tuple[str, int], bytes]:
        return self._listener.address, self._key

    def _accept_forever(self) -> None:
        while not self._closed:
            try:
                conn = self._listener.accept()
            except Exception:  # closed, or a client that failed the key's challenge
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        with conn:
            while True:
                try:
                    name, args = conn.recv()
                except (EOFError, OSError):
                    return
                try:
                    if name not in ("enqueue", "retry_after"):
                        raise ValueError(f"unknown job queue call {name!r}")
                    getattr(self._queue, name)(*args)
                    conn.send((True, None))
                except Exception as error:
                    get_logger().exception("local job queue: a call from a worker failed")
                    conn.send((False, f"{type(error).__name__}: {error}"))

    def close(self) -> None:
        self._closed = True
        self._listener.close()


class JobQueueClient:
    """memory.ports.JobQueue in a worker process: each call is answered by the server's queue."""

    def __init__(self, address: tuple[str, int], key: bytes):
        self._address, self._key = address, key
        self._conn = None
        self._lock = threading.Lock()

    def enqueue(self, group: str, messages: list[tuple[str, str]]) -> None:
        self._call("enqueue", (group, messages))

    def retry_after(self, receipt: str, seconds: int) -> None:
        self._call("retry_after", (receipt, seconds))

    def _call(self, name: str, args: tuple) -> None:
        with self._lock:
            if self._conn is None:
                self._conn = Client(self._address, authkey=self._key)
            self._conn.send((name, args))
            ok, error = self._conn.recv()
        if not ok:
            raise RuntimeError(f"the local job queue refused the {name}: {error}")


def connect_job_queue(address: tuple[str, int], key: bytes) -> JobQueueClient:
    return JobQueueClient(address, key)
