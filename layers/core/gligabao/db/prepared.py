"""Texts extracted and embedded ahead of their jobs (migration 0021, memory/prepare_ahead.py).

A row pairs a pending artifact with the extract stage's reply for its text and the vectors of the
strings that reply makes the remember embed, and the options (reasoning, models) it was made with.
The vectors are a `vector[]` (migration 0041) sent and read in binary: a text of 50 facts has about
60 vectors of 1536 numbers, 264-271 ms to write as the text of a `real[]` and 12 ms as `vector[]`
(bench/prepared_rows.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from pgvector import Vector
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

# A prepared row older than this no longer counts as the window of texts ahead being full: its
# artifact's job is not coming (a lost message), and the texts behind it are prepared again.
STALE_AFTER_SECONDS = 3600


@dataclass(frozen=True)
class WaitingText:
    """A pending text of the dataset, queued behind the job that runs."""

    artifact_id: int
    dataset_id: int
    text: str
    session_id: str | None
    reference_time: datetime


@dataclass(frozen=True)
class PreparedRow:
    options: dict
    extraction: dict
    embedded: list[str]
    vectors: list[list[float]]


def texts_to_prepare(
    conn: psycopg.Connection,
    artifact_id: int,
    count: int,
    max_chars: int,
    job_options: Mapping,
    after: int = 0,
) -> list[WaitingText]:
    """The next `count` pending texts of the artifact's dataset (in the queue's order, which is
    their ids') of at most `max_chars` characters, queued with `job_options` (the running job's:
    only such a job can use what it prepares), none prepared; [] while the dataset has texts
    prepared already, so that texts are prepared a window at a time. `after`: only texts queued
    behind this artifact (a window of texts prepares those behind its last one)."""
    rows = conn.execute(
        """
        WITH running AS (SELECT dataset_id FROM gb_artifacts WHERE id = %(id)s)
        SELECT a.id AS artifact_id, a.dataset_id, a.text, a.session_id, a.reference_time
        FROM running r JOIN gb_artifacts a ON a.dataset_id = r.dataset_id AND a.status = 'pending'
        WHERE a.id <> %(id)s AND a.id > %(after)s AND a.kind = 'text' AND char_length(a.text) <= %(max_chars)s
          AND a.job_options = %(job_options)s
          AND NOT EXISTS (SELECT 1 FROM gb_prepared_texts p WHERE p.artifact_id = a.id)
          AND NOT EXISTS (SELECT 1 FROM gb_prepared_texts p
                          WHERE p.dataset_id = r.dataset_id
                            AND p.created_at > now() - make_interval(secs => %(stale)s))
        ORDER BY a.id
        LIMIT %(count)s
        """,
        {
            "id": artifact_id,
            "count": count,
            "max_chars": max_chars,
            "job_options": Jsonb(dict(job_options)),
            "stale": STALE_AFTER_SECONDS,
            "after": after,
        },
    ).fetchall()
    return [WaitingText(**row) for row in rows]


def save(
    conn: psycopg.Connection,
    text: WaitingText,
    options: Mapping,
    extraction: Mapping,
    embedded: Sequence[str],
    vectors: Sequence[Sequence[float]],
) -> None:
    """Keep a prepared text, while its artifact is still pending (once: a second is ignored)."""
    conn.execute(
        """
        INSERT INTO gb_prepared_texts (artifact_id, dataset_id, options, extraction, embedded, vectors)
        SELECT %(id)s, %(dataset_id)s, %(options)s, %(extraction)s, %(embedded)s::text[], %(vectors)b::vector[]
        WHERE EXISTS (SELECT 1 FROM gb_artifacts WHERE id = %(id)s AND status = 'pending')
        ON CONFLICT (artifact_id) DO NOTHING
        """,
        {
            "id": text.artifact_id,
            "dataset_id": text.dataset_id,
            "options": Jsonb(dict(options)),
            "extraction": Jsonb(dict(extraction)),
            "embedded": list(embedded),
            "vectors": [Vector(list(v)) for v in vectors] or None,
        },
    )


def take(conn: psycopg.Connection, artifact_id: int) -> PreparedRow | None:
    """The artifact's prepared text, deleted: each is used (or dropped) by one attempt only."""
    rows = _read(
        conn,
        "DELETE FROM gb_prepared_texts WHERE artifact_id = %s RETURNING artifact_id, options, extraction, embedded, vectors",
        [artifact_id],
    )
    return rows.get(artifact_id)


def peek(conn: psycopg.Connection, artifact_ids: Sequence[int]) -> dict[int, PreparedRow]:
    """The prepared texts of these artifacts, by artifact, left in place: a window reads those of the
    texts it takes along and deletes (`drop`) the rows of the ones it stores; a text it cuts keeps
    its row for the window after it."""
    return _read(
        conn,
        """SELECT artifact_id, options, extraction, embedded, vectors FROM gb_prepared_texts
           WHERE artifact_id = ANY(%s::bigint[])""",
        [list(artifact_ids)],
    )


def drop(conn: psycopg.Connection, artifact_ids: Sequence[int]) -> None:
    """Delete the prepared texts of these artifacts (stored, or prepared with what no job here uses)."""
    conn.execute("DELETE FROM gb_prepared_texts WHERE artifact_id = ANY(%s::bigint[])", [list(artifact_ids)])


def _read(conn: psycopg.Connection, statement: str, params: Sequence) -> dict[int, PreparedRow]:
    """The rows of `statement`, read in binary (the vectors as pgvector's binary, not text)."""
    with conn.cursor(binary=True, row_factory=dict_row) as cursor:
        rows = cursor.execute(statement, params).fetchall()
    return {
        row["artifact_id"]: PreparedRow(
            row["options"],
            row["extraction"],
            row["embedded"],
            [vector.to_list() for vector in row["vectors"] or []],
        )
        for row in rows
    }
