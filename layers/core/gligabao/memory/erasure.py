"""Erasing a user (DELETE /v1/gb/users/{user_id}): every row of the user in every table, in one
transaction of that user (row-level security applies to it as to any other request), so that an
erasure is all or nothing; their queued and running jobs are cancelled by it (their artifacts go),
and a worker that holds one makes no model call and writes nothing after it (memory/job_guard.py).
Erasing a user with nothing stored (or erased already) erases nothing and succeeds: the request is
idempotent.

The answer is a receipt (rows erased per table, jobs cancelled, when), and the same receipt is
logged with a digest of the user's id instead of the id: an operator can later show that a given
user was erased, and the log holds nothing of theirs.

One transaction is enough at the sizes measured (docs/api/forget.md, "Erasing a user"): the foreign keys
cascade from the user's datasets, and the statement time grows with the rows deleted.
"""

from __future__ import annotations

import hashlib

from gligabao.db import erasure as erasure_rows
from gligabao.db.erasure import ErasedRows
from gligabao.memory.ports import Memory
from gligabao.observability.logging import get_logger
from gligabao.timefmt import rfc3339


def erase_user(memory: Memory, user_id: str) -> ErasedRows:
    with memory.database.transaction(user_id) as uow:
        erased = erasure_rows.erase_user(uow.conn, user_id)
    get_logger().info(
        "user.erased",
        extra={
            "user_digest": user_digest(user_id),
            "erased_at": rfc3339(erased.erased_at),
            "rows": erased.rows,
            "jobs_cancelled": erased.jobs_cancelled,
        },
    )
    return erased


def user_digest(user_id: str) -> str:
    """What the erasure's log says of the user: the SHA-256 of their id (prove, given the id)."""
    return hashlib.sha256(user_id.encode("utf-8")).hexdigest()
