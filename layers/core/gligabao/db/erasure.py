"""Erasing a user: every row of the user in every gb_ table, in one transaction.

The user's rows hang from three roots. `gb_datasets` holds everything a dataset holds (artifacts
and their chunks, images, entities, edges, their statements, judgements, provenance and session
links, the recency and description tables, prepared texts, trajectories, asynchronous jobs, which
are artifact rows): their foreign keys cascade from it. `gb_inferences` (kept past a dataset's
deletion for the cost history) and `gb_idempotency_records` carry the user's id themselves.
`gb_ontologies` carry the user's id too and go last: a dataset attached to one restricts its
deletion until the dataset is gone.

The user's datasets are locked first (FOR UPDATE): a store of theirs under way ends before (and is
erased), and every later write of a queued job of theirs waits for the erasure and then finds its
text gone (memory/job_guard.py), so nothing of the user is written once the erasure commits. What
was erased is counted per table by the database itself, cascades included
(pg_stat_xact_user_tables: the deletions of this transaction).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg


@dataclass(frozen=True)
class ErasedRows:
    """The receipt of an erasure: rows deleted per table, the queued or running jobs cancelled."""

    erased_at: datetime
    rows: dict[str, int]
    jobs_cancelled: int


# The rows this session has deleted from each gb_ table, as the statistics count them: read before and
# after the deletions, in the same transaction, their difference is what it deleted (the counts a
# session has not reported yet may include earlier transactions').
_DELETED = """SELECT relname, n_tup_del FROM pg_stat_xact_user_tables
              WHERE schemaname = 'public' AND relname LIKE 'gb\\_%%'"""


def erase_user(conn: psycopg.Connection, user_id: str) -> ErasedRows:
    deleted_before = {row["relname"]: row["n_tup_del"] for row in conn.execute(_DELETED).fetchall()}
    conn.execute("SELECT id FROM gb_datasets WHERE user_id = %s ORDER BY id FOR UPDATE", [user_id])
    jobs = conn.execute(
        """SELECT count(*) AS jobs FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id
           WHERE d.user_id = %s AND a.status IN ('pending', 'running')""",
        [user_id],
    ).fetchone()["jobs"]
    conn.execute("DELETE FROM gb_inferences WHERE user_id = %s", [user_id])
    conn.execute("DELETE FROM gb_idempotency_records WHERE user_id = %s", [user_id])
    conn.execute("DELETE FROM gb_datasets WHERE user_id = %s", [user_id])
    conn.execute("DELETE FROM gb_ontologies WHERE user_id = %s", [user_id])
    deleted = {
        row["relname"]: row["n_tup_del"] - deleted_before.get(row["relname"], 0)
        for row in conn.execute(_DELETED).fetchall()
    }
    # The database's clock after the deletions, not the transaction's start: the moment nearest the commit.
    erased_at = conn.execute("SELECT clock_timestamp() AS at").fetchone()["at"]
    return ErasedRows(erased_at, {table: n for table, n in sorted(deleted.items()) if n > 0}, jobs)
