"""The guard of a queued job's model calls and writes (observability/inferences.CallGuard): once its
text is gone (its user erased, its dataset deleted, its request cancelled), no model call is made for
it and nothing of it is written, whatever the worker was doing when that happened.

- Around each attempt of a model call: a read of whether its artifact is still there, in a
  transaction of its own that holds its dataset's row (FOR KEY SHARE) until the attempt ends. An
  erasure locks the user's datasets first (FOR UPDATE): it waits for the attempts under way (each
  bounded by its timeout), and one that would begin after it finds its text gone. So once the
  erasure returns, no model call is under way or made for the user. The hold does not block the
  stores of the dataset (which lock its row FOR NO KEY UPDATE), only its erasure or deletion.
- Its inferences are written only while its text is there, its dataset's row held (FOR KEY SHARE)
  by the same statement (observability/inferences.save_inferences): an erasure, which locks the
  user's datasets first, either comes after that transaction and erases what it wrote, or came
  before and nothing is written. A dataset deleted under a running job takes its costs with it.
- Its store fills the pending artifact under the dataset's lock, and rolls back when it is gone
  (memory/remember.py); a text prepared ahead refers to its artifact, and goes with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from gligabao.db import jobs as job_rows
from gligabao.memory.ports import Memory
from gligabao.observability.inferences import CallCancelled


@dataclass(frozen=True)
class JobGuard:
    memory: Memory
    user_id: str
    artifact_ids: Sequence[int]

    @contextmanager
    def held(self) -> Iterator[None]:
        # Pipelined: BEGIN travels with the check (one round trip), the COMMIT after the attempt is
        # the other (bench/job_guard.py).
        with self.memory.database.transaction(self.user_id, pipeline=True) as uow:
            if not job_rows.wanted(uow.conn, self.artifact_ids):
                raise CallCancelled(f"artifact {self.artifact_ids[0]} is gone: no model call is made for it")
            yield  # the attempt, its dataset's row held: an erasure waits for it


def guard_of(memory: Memory, user_id: str, artifact_id: int) -> JobGuard:
    return JobGuard(memory, user_id, (artifact_id,))
