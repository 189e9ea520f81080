"""Erasing a user (DELETE /v1/gb/users/{user_id}): every row of the user in every table, in one
transaction of that user (row-level security applies to it as to any other request), so that an
erasure is all or nothing. Erasing a user with nothing stored (or erased already) erases nothing
and succeeds: the request is idempotent.

One transaction is enough at the sizes measured (docs/api/forget.md, "Erasing a user"): the foreign keys
cascade from the user's datasets, and the statement time grows with the rows deleted.
"""

from __future__ import annotations

from gligabao.db import erasure as erasure_rows
from gligabao.db.erasure import ErasedRows
from gligabao.memory.ports import Memory


def erase_user(memory: Memory, user_id: str) -> ErasedRows:
    with memory.database.transaction(user_id) as uow:
        return erasure_rows.erase_user(uow.conn, user_id)
