"""The rows of asynchronous remembers: the pending artifacts a request stores before any model
call, and the status the worker moves them through (pending -> running -> done | failed).

A pending artifact holds the text, its session and reference time: the queue's message names
only the artifact (and its user), so a message is small and the text is written once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb

# The error of the artifacts of a request whose jobs the queue refused: the request answered 503
# "nothing was remembered", so a job of it that the queue did take stores nothing (`claim` skips
# it, and a store that began before the refusal finds its artifact cancelled and rolls back).
NOT_QUEUED = "the job could not be queued"
NOT_CANCELLED = "NOT ({a}status = 'failed' AND {a}error IS NOT DISTINCT FROM %(not_queued)s)"

# An artifact's status and error as they are read: a `running` artifact whose last attempt has
# ended without finishing (the worker's timeout, memory) is failed; `a` is the artifact's alias.
_GAVE_UP = "a.status = 'running' AND a.gives_up_at <= now()"
JOB_STATUS = f"CASE WHEN {_GAVE_UP} THEN 'failed' ELSE a.status END"
JOB_ERROR = (
    f"CASE WHEN {_GAVE_UP} "
    "THEN 'the last attempt ended before it finished (the worker''s timeout or memory)' ELSE a.error END"
)


@dataclass(frozen=True)
class PendingText:
    text: str
    session_id: str | None
    reference_time: datetime
    kind: str = "text"  # or "facts"
    memory_kind: str = "knowledge"  # or "episode"
    metadata: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimedArtifact:
    """A pending (or retried) artifact the worker now runs."""

    id: int
    dataset: str
    text: str
    session_id: str | None
    reference_time: datetime
    kind: str = "text"


def insert_pending(
    conn: psycopg.Connection, dataset_id: int, texts: Sequence[PendingText], job_options: Mapping
) -> list[int]:
    """One pending text artifact per text, in one statement, with the options of the jobs queued
    for them: their ids in the order given."""
    rows = conn.execute(
        """
        INSERT INTO gb_artifacts (dataset_id, kind, text, session_id, reference_time, status, job_options,
                                  memory_kind, metadata)
        SELECT %(dataset_id)s, t.kind, t.text, t.session_id, t.reference_time, 'pending', %(job_options)s,
               t.memory_kind, t.metadata
        FROM unnest(%(kind)s::text[], %(text)s::text[], %(session_id)s::text[], %(reference_time)s::timestamptz[],
                    %(memory_kind)s::text[], %(metadata)s::jsonb[])
             WITH ORDINALITY AS t(kind, text, session_id, reference_time, memory_kind, metadata, ord)
        ORDER BY t.ord
        RETURNING id
        """,
        {
            "dataset_id": dataset_id,
            "job_options": Jsonb(dict(job_options)),
            "kind": [t.kind for t in texts],
            "memory_kind": [t.memory_kind for t in texts],
            "metadata": [Jsonb(dict(t.metadata)) for t in texts],
            "text": [t.text for t in texts],
            "session_id": [t.session_id for t in texts],
            "reference_time": [t.reference_time for t in texts],
        },
    ).fetchall()
    return sorted(row["id"] for row in rows)  # identities follow the insertion order


def claim(
    conn: psycopg.Connection, artifact_id: int, last_attempt_ends_in: float | None = None
) -> ClaimedArtifact | None:
    """Mark the artifact running and return what the pipeline needs; None when it is done already
    (a redelivery), gone (forgotten meanwhile), cancelled (NOT_QUEUED) or not the user's (row-level
    security). The last attempt says within how many seconds it will have ended at the latest
    (JOB_STATUS)."""
    row = conn.execute(
        """
        UPDATE gb_artifacts a
        SET status = 'running', gives_up_at = now() + make_interval(secs => %(ends_in)s)
        FROM gb_datasets d
        WHERE a.id = %(id)s AND a.kind IN ('text', 'facts') AND a.status <> 'done' AND d.id = a.dataset_id
          AND """
        + NOT_CANCELLED.format(a="a.")
        + """
        RETURNING a.id, d.name AS dataset, a.text, a.session_id, a.reference_time, a.kind
        """,
        {"id": artifact_id, "ends_in": last_attempt_ends_in, "not_queued": NOT_QUEUED},
    ).fetchone()
    return ClaimedArtifact(**row) if row else None


def done_among(conn: psycopg.Connection, artifact_ids: Sequence[int]) -> list[int]:
    """The artifacts among these whose job has stored them."""
    rows = conn.execute(
        "SELECT id FROM gb_artifacts WHERE id = ANY(%s) AND status = 'done' ORDER BY id", [list(artifact_ids)]
    ).fetchall()
    return [row["id"] for row in rows]


def set_status(conn: psycopg.Connection, artifact_ids: Sequence[int], status: str, error: str | None) -> None:
    """Set the status (and error) of artifacts not done yet: a done artifact is never undone."""
    conn.execute(
        "UPDATE gb_artifacts SET status = %s, error = %s WHERE id = ANY(%s) AND status <> 'done'",
        [status, error, list(artifact_ids)],
    )


@dataclass(frozen=True)
class QueuedBehind:
    """A text artifact queued behind the one a job runs, as a window of texts reads it."""

    id: int
    text: str
    session_id: str | None
    reference_time: datetime
    kind: str
    status: str
    chars: int
    job_options: dict
    prepared_facts: int | None = None  # the facts of its prepared extraction (prepare_ahead), if any


def queued_behind(conn: psycopg.Connection, artifact_id: int, count: int) -> list[QueuedBehind]:
    """The next `count` artifacts of the artifact's dataset still to be run by a job, in the queue's
    order (their ids'): the texts a window may take along (memory/windows.py), with the facts of
    what was extracted for them ahead, when it was (a count: the rows' vectors are not read)."""
    rows = conn.execute(
        """
        SELECT a.id, a.text, a.session_id, a.reference_time, a.kind, a.status,
               char_length(a.text) AS chars, a.job_options,
               (SELECT CASE WHEN jsonb_typeof(p.extraction -> 'edges') = 'array'
                            THEN jsonb_array_length(p.extraction -> 'edges') END
                FROM gb_prepared_texts p WHERE p.artifact_id = a.id) AS prepared_facts
        FROM gb_artifacts h JOIN gb_artifacts a ON a.dataset_id = h.dataset_id
        WHERE h.id = %(id)s AND a.id > %(id)s AND a.kind IN ('text', 'facts')
          AND a.status IN ('pending', 'running')
        ORDER BY a.id
        LIMIT %(count)s
        """,
        {"id": artifact_id, "count": count},
    ).fetchall()
    return [QueuedBehind(**row) for row in rows]


def still_pending(conn: psycopg.Connection, artifact_ids: Sequence[int]) -> set[int]:
    """Those of the artifacts a job may still fill: not done, not cancelled, not forgotten."""
    rows = conn.execute(
        "SELECT id FROM gb_artifacts a WHERE id = ANY(%(ids)s) AND status <> 'done' AND "
        + NOT_CANCELLED.format(a="a."),
        {"ids": list(artifact_ids), "not_queued": NOT_QUEUED},
    ).fetchall()
    return {row["id"] for row in rows}


def wanted(conn: psycopg.Connection, artifact_ids: Sequence[int]) -> bool:
    """Whether one of the artifacts is still there, its request not cancelled (a job's guard, before
    a model call). Its dataset's row is held (FOR KEY SHARE) until the transaction ends: an erasure
    under way (it locks the user's datasets first) is waited for, and then the artifact is gone."""
    rows = conn.execute(
        "SELECT d.id FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id"
        " WHERE a.id = ANY(%(ids)s) AND " + NOT_CANCELLED.format(a="a.") + " FOR KEY SHARE OF d",
        {"ids": list(artifact_ids), "not_queued": NOT_QUEUED},
    ).fetchall()
    return bool(rows)
