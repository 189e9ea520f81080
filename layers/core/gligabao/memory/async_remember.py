"""Asynchronous remember (large and bulk ingestion): the request stores its texts as pending
artifacts and queues one job per text; a worker runs each job through the same pipeline as the
synchronous remember (memory/remember.py), filling that artifact.

Statuses: pending (queued, or waiting for a retry) -> running -> done, or failed with its error.
- One job per artifact: the message names the artifact and its user, so the worker opens its units
  of work as that user (row-level security) and a redelivery of a finished job finds the artifact
  done and stores nothing (the store's UPDATE ... WHERE status <> 'done' under the dataset's lock).
- The jobs of one dataset form one message group, sent in order of reference time: the queue
  delivers them one at a time, in that order, so later facts supersede earlier ones.
- A model or database failure is retried by the queue with backoff; after `async_max_attempts`
  attempts the artifact is marked failed and the message goes to the dead-letter queue. A request
  error (4xx: the text cannot be remembered) fails the artifact at once, without retries.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum

import psycopg

from gligabao.db import forget as forget_rows
from gligabao.db import jobs as job_rows
from gligabao.db import prepared as prepared_rows
from gligabao.db.jobs import ClaimedArtifact, QueuedBehind
from gligabao.errors import GbError, failure_reason
from gligabao.memory import prepare_ahead, windows
from gligabao.memory.facts import facts_request, remember_facts
from gligabao.memory.job_guard import guard_of
from gligabao.memory.ports import JobQueue, Memory
from gligabao.memory.remember import AlreadyStored, PreparedText, TextToRemember, remember_text
from gligabao.memory.remember_job import RememberJob
from gligabao.memory.windows import WindowText
from gligabao.observability.inferences import CallCancelled, CallContext

# After its deadline, how long a last attempt is still taken for running (db/jobs.py, JOB_STATUS).
LAST_ATTEMPT_MARGIN_S = 60.0


@dataclass(frozen=True)
class QueuedText:
    """One text of an asynchronous remember (its own session and reference time)."""

    text: str
    session_id: str | None = None
    reference_time: datetime | None = None
    kind: str = "text"  # or "facts": the text is the facts as given (memory/facts.py)
    memory_kind: str = "knowledge"  # or "episode"
    metadata: Mapping[str, object] = field(default_factory=dict)  # the caller's labels


class AttemptFailed(Exception):
    """An attempt that stored nothing: `error` as the artifact shows it, `status` as the same
    failure would answer over HTTP (the job's monitoring event reports it)."""

    def __init__(self, error: str, status: int):
        super().__init__(error)
        self.error, self.status = error, status


class Refused(AttemptFailed):
    """A request error (4xx: the text cannot be remembered): the artifact is failed, never retried."""


class RetryLater(AttemptFailed):
    """The attempt failed and another is due: the queue redelivers the message after a backoff."""

    def __init__(self, error: str, status: int, attempt: int):
        super().__init__(error, status)
        self.attempt = attempt


class GaveUp(AttemptFailed):
    """The last attempt failed: the artifact is marked failed, the message goes to the dead-letter queue."""


class Outcome(Enum):
    DONE = "done"
    SKIPPED = "skipped"  # done already (a redelivery), forgotten meanwhile, or not the user's


class QueueUnavailable(GbError):
    status = 503


def accept(
    memory: Memory,
    queue: JobQueue,
    *,
    user_id: str,
    dataset: str,
    texts: Sequence[QueuedText],
    reasoning: Mapping[str, str] | None = None,
    models: Mapping[str, str] | None = None,
    eval: bool = False,
) -> list[int]:
    """Store the texts as pending artifacts (one transaction) and queue their jobs, in order of
    reference time (a missing one is now, the order given breaking ties). The artifacts' ids, in the
    order given. When the queue refuses a job, the request is cancelled (`_cancel`) and the call
    raises QueueUnavailable (503): nothing is remembered, and nothing is left pending with no job to
    run it."""
    now = memory.clock()
    pending = [
        job_rows.PendingText(t.text, t.session_id, t.reference_time or now, t.kind, t.memory_kind, t.metadata)
        for t in texts
    ]
    # Inserted in the queue's order, so that the artifacts' ids follow it (memory/prepare_ahead.py
    # prepares the texts queued next by id).
    order = sorted(range(len(pending)), key=lambda i: (pending[i].reference_time, i))
    job = RememberJob(0, user_id, dict(reasoning or {}), dict(models or {}), eval)  # ids to come
    with memory.database.transaction(user_id, dataset, lock_dataset=True) as uow:  # created if missing
        dataset_id = uow.dataset_id
        queued_ids = job_rows.insert_pending(uow.conn, dataset_id, [pending[i] for i in order], job.options())
    ids = [artifact_id for _, artifact_id in sorted(zip(order, queued_ids, strict=True))]
    jobs = [replace(job, artifact_id=i) for i in queued_ids]
    try:
        queue.enqueue(str(dataset_id), [(str(job.artifact_id), job.body()) for job in jobs])
    except Exception as exc:
        _cancel(memory, user_id, ids)
        raise QueueUnavailable("the job queue is unavailable; nothing was remembered") from exc
    return ids


def _cancel(memory: Memory, user_id: str, artifact_ids: list[int]) -> None:
    """A request the queue took only in part: its artifacts are failed (NOT_QUEUED), so the jobs
    the queue did take store nothing (one already running rolls its store back), and a text whose
    job stored it before the refusal is forgotten. Under the dataset's lock, which a store holds
    until it commits: a store in flight either committed before (its text is forgotten here) or
    finds its artifact cancelled after."""
    with memory.database.transaction(user_id) as uow:
        owner = forget_rows.lock_dataset_of_artifact(uow.conn, user_id, artifact_ids[0])
        if owner is None:  # the dataset was deleted meanwhile, with the request's artifacts
            return
        job_rows.set_status(uow.conn, artifact_ids, "failed", job_rows.NOT_QUEUED)
        for artifact_id in job_rows.done_among(uow.conn, artifact_ids):
            forget_rows.delete_artifact(uow.conn, owner.dataset_id, artifact_id)


def run(
    memory: Memory,
    job: RememberJob,
    *,
    attempt: int,
    max_attempts: int,
    deadline: float | None = None,
    request_id: str | None = None,
) -> Outcome:
    """One attempt at a job (`attempt` counts from 1). Raises Refused for a request error, RetryLater
    when another attempt is due, GaveUp after the last one; each time the artifact keeps the error
    and nothing is half-stored.
    The texts queued behind it may be extracted ahead meanwhile (memory/prepare_ahead.py)."""
    with memory.database.transaction(job.user_id) as uow:
        claimed = job_rows.claim(
            uow.conn, job.artifact_id, _ends_in(deadline) if attempt >= max_attempts else None
        )
        if claimed is None:
            return Outcome.SKIPPED
        prepared = prepare_ahead.usable(memory, prepared_rows.take(uow.conn, claimed.id), job)
        along = _texts_along(memory, uow.conn, job, claimed, attempt, prepared)
        prepared_along = prepare_ahead.usable_along(memory, uow.conn, [text.id for text in along], job)
        ahead = prepare_ahead.texts_to_prepare(memory, uow.conn, job, window=[t.id for t in along])
    request = TextToRemember(
        user_id=job.user_id,
        dataset=claimed.dataset,
        text=claimed.text,
        session_id=claimed.session_id,
        reference_time=claimed.reference_time,
        reasoning=job.reasoning,
        models=job.models,
        eval=job.eval,
    )
    with prepare_ahead.preparing(memory, ahead, job, request_id=request_id, deadline=deadline):
        try:
            if along:
                window = [
                    WindowText(
                        claimed.id, request, _call_of(memory, job, request, request_id, claimed.id), prepared
                    ),
                    *(
                        _window_text(memory, job, request, text, prepared_along.get(text.id), request_id)
                        for text in along
                    ),
                ]
                windows.remember_window(
                    memory,
                    window,
                    reasoning=job.reasoning,
                    models=job.models,
                    deadline=deadline,
                    prepared_options=prepare_ahead.prepared_options(memory, job),
                )
            elif claimed.kind == "facts":
                remember_facts(
                    memory,
                    facts_request(request),
                    request_id=request_id,
                    deadline=deadline,
                    artifact_id=claimed.id,
                    guard=guard_of(memory, job.user_id, claimed.id),
                )
            else:
                remember_text(
                    memory,
                    request,
                    request_id=request_id,
                    deadline=deadline,
                    artifact_id=claimed.id,
                    prepared=prepared,
                    guard=guard_of(memory, job.user_id, claimed.id),
                )
        except (AlreadyStored, CallCancelled):  # done, or gone meanwhile (its user erased)
            return Outcome.SKIPPED
        except Exception as exc:
            error, status = failure_reason(exc), exc.status if isinstance(exc, GbError) else 500
            if status < 500:
                _mark(memory, job, "failed", error)
                raise Refused(error, status) from exc
            if attempt >= max_attempts:
                _mark(memory, job, "failed", f"{error} (after {attempt} attempts)")
                raise GaveUp(error, status) from exc
            _mark(memory, job, "pending", f"attempt {attempt} of {max_attempts} failed: {error}; retrying")
            raise RetryLater(error, status, attempt) from exc
    return Outcome.DONE


def _texts_along(
    memory: Memory,
    conn: psycopg.Connection,
    job: RememberJob,
    claimed: ClaimedArtifact,
    attempt: int,
    prepared: PreparedText | None,
) -> list[QueuedBehind]:
    """The texts queued behind a job's that it remembers with its own (memory/windows.py): on a
    first attempt of a short text, not an eval job's (whose trajectory is one text's); a retry runs
    its text alone (the window split), and a single text stays alone. `prepared`: the job's own
    text as extracted ahead, whose facts count towards the window's reply."""
    limits = memory.limits
    short = claimed.kind == "text" and len(claimed.text) <= limits.chunking_threshold_chars
    if limits.bulk_window_texts < 2 or job.eval or attempt > 1 or not short:
        return []
    return windows.texts_along(
        job_rows.queued_behind(conn, claimed.id, limits.bulk_window_texts - 1),
        window=limits.bulk_window_texts,
        max_chars=limits.chunking_threshold_chars,
        job_options=job.options(),
        first_facts=len(prepared.extraction.edges) if prepared is not None else 0,
    )


def _call_of(
    memory: Memory, job: RememberJob, request: TextToRemember, request_id: str | None, artifact_id: int
) -> CallContext:
    return CallContext(
        user_id=job.user_id,
        type="remember",
        session_id=request.session_id,
        request_id=request_id,
        guard=guard_of(memory, job.user_id, artifact_id),
    )


def _window_text(
    memory: Memory,
    job: RememberJob,
    first: TextToRemember,
    text: QueuedBehind,
    prepared: PreparedText | None,
    request_id: str | None,
) -> WindowText:
    request = replace(first, text=text.text, session_id=text.session_id, reference_time=text.reference_time)
    return WindowText(text.id, request, _call_of(memory, job, request, request_id, text.id), prepared)


def _ends_in(deadline: float | None) -> float | None:
    """Within how many seconds the attempt will have ended at the latest: its deadline, and a margin
    for the clocks of the worker and the database; None without a deadline."""
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic()) + LAST_ATTEMPT_MARGIN_S


def retry_delay_seconds(attempt: int, base: float, longest: float) -> int:
    """Exponential backoff before attempt `attempt + 1`: base, 2 x base, 4 x base..., at most `longest`."""
    return int(min(longest, base * 2 ** max(0, attempt - 1)))


def _mark(memory: Memory, job: RememberJob, status: str, error: str) -> None:
    with memory.database.transaction(job.user_id) as uow:
        job_rows.set_status(uow.conn, [job.artifact_id], status, error)
