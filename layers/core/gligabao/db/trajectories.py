"""The queries of gb_trajectories: the ATIF trajectory of an eval call, written in the call's own
transaction, and read back by id or as a dataset's list.

Every read reaches rows only through the user's dataset (a join on `gb_datasets.user_id` in the
SQL itself, on top of row-level security), so an id guessed by another user finds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb


@dataclass(frozen=True)
class StoredTrajectory:
    id: int
    dataset: str
    kind: str  # 'remember' or 'query'
    session_id: str | None
    created_at: datetime
    trajectory: dict[str, Any] | None  # None in a list (GET one by id for it)
    steps: int
    final_metrics: dict[str, Any] | None
    artifact_id: int | None


def insert_trajectory(
    conn: psycopg.Connection,
    *,
    dataset_id: int,
    session_id: str | None,
    kind: str,
    trajectory: dict[str, Any],
) -> int:
    """Store the trajectory (one statement); its id. The trajectory names itself with that id:
    `trajectory_id`, and `session_id` when the call had no session (ATIF: the trajectory's own id),
    which is also the row's session, so a list by that session finds it."""
    row = conn.execute(
        """
        WITH next AS (SELECT nextval(pg_get_serial_sequence('gb_trajectories', 'id')) AS id)
        INSERT INTO gb_trajectories (id, dataset_id, session_id, kind, trajectory)
        OVERRIDING SYSTEM VALUE
        SELECT next.id, %(dataset_id)s, coalesce(%(session_id)s::text, next.id::text), %(kind)s,
               %(trajectory)s::jsonb || jsonb_build_object(
                   'trajectory_id', next.id::text,
                   'session_id', coalesce(%(session_id)s::text, next.id::text))
        FROM next
        RETURNING id
        """,
        {"dataset_id": dataset_id, "session_id": session_id, "kind": kind, "trajectory": Jsonb(trajectory)},
    ).fetchone()
    return row["id"]


# What a list shows of a trajectory: enough to pick one, not its steps.
_SUMMARY_COLUMNS = """t.id, d.name AS dataset, t.kind, t.session_id, t.created_at,
       jsonb_array_length(t.trajectory -> 'steps') AS steps,
       t.trajectory -> 'final_metrics' AS final_metrics,
       (t.trajectory -> 'extra' ->> 'artifact_id')::bigint AS artifact_id"""


def trajectory_row(conn: psycopg.Connection, *, user_id: str, trajectory_id: int) -> StoredTrajectory | None:
    row = conn.execute(
        f"""
        SELECT {_SUMMARY_COLUMNS}, t.trajectory
        FROM gb_trajectories t JOIN gb_datasets d ON d.id = t.dataset_id
        WHERE t.id = %(id)s AND d.user_id = %(user_id)s
        """,
        {"id": trajectory_id, "user_id": user_id},
    ).fetchone()
    return _stored(row) if row is not None else None


def trajectory_rows(
    conn: psycopg.Connection,
    *,
    user_id: str,
    dataset_id: int,
    session_id: str | None,
    kind: str | None,
    artifact_id: int | None,
    after_id: int,
    take: int,
) -> list[StoredTrajectory]:
    """Up to `take` trajectories of the dataset by id after `after_id`, oldest first; each filter
    applies when given."""
    rows = conn.execute(
        f"""
        SELECT {_SUMMARY_COLUMNS}, NULL::jsonb AS trajectory
        FROM gb_trajectories t JOIN gb_datasets d ON d.id = t.dataset_id
        WHERE t.dataset_id = %(dataset_id)s AND d.user_id = %(user_id)s AND t.id > %(after_id)s
          AND (%(session_id)s::text IS NULL OR t.session_id = %(session_id)s::text)
          AND (%(kind)s::text IS NULL OR t.kind = %(kind)s::text)
          AND (%(artifact_id)s::bigint IS NULL
               OR t.trajectory -> 'extra' -> 'artifact_id' = to_jsonb(%(artifact_id)s::bigint))
        ORDER BY t.id
        LIMIT %(take)s
        """,
        {
            "dataset_id": dataset_id,
            "user_id": user_id,
            "after_id": after_id,
            "session_id": session_id,
            "kind": kind,
            "artifact_id": artifact_id,
            "take": take,
        },
    ).fetchall()
    return [_stored(row) for row in rows]


def _stored(row: dict) -> StoredTrajectory:
    return StoredTrajectory(**{**row, "steps": row["steps"] or 0})
