"""Reading eval trajectories back: one by id, or a page of a dataset's (by session, kind or artifact).

Each read is one statement in a unit of work of the user: another user's trajectory is a 404, never
their row. A list shows each trajectory's summary (GET one by id for its steps): a remember's
trajectory holds its text, and a page of them must stay within a Lambda response.
"""

from __future__ import annotations

import base64
import binascii
import json

from gligabao.db import trajectories as rows
from gligabao.db.trajectories import StoredTrajectory
from gligabao.errors import BadRequest, NotFound
from gligabao.memory.ports import Memory
from gligabao.memory.readback import page_size
from gligabao.model import TRAJECTORY_KINDS

_CURSOR_KIND = "trajectories"


def read_trajectory(memory: Memory, user_id: str, trajectory_id: int) -> StoredTrajectory:
    with memory.database.transaction(user_id) as uow:
        found = rows.trajectory_row(uow.conn, user_id=user_id, trajectory_id=trajectory_id)
    if found is None:
        raise NotFound(f"trajectory {trajectory_id} not found")
    return found


def list_trajectories(
    memory: Memory,
    user_id: str,
    dataset: str,
    *,
    session_id: str | None = None,
    kind: str | None = None,
    artifact_id: int | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[StoredTrajectory], str | None]:
    """A page of the dataset's trajectories, oldest first, and the cursor of the next page (None on
    the last). An unknown dataset is a 404; a session with no trajectory an empty page."""
    if kind is not None and kind not in TRAJECTORY_KINDS:
        raise BadRequest(f"kind must be one of {', '.join(TRAJECTORY_KINDS)}")
    take = page_size(memory.limits, limit)
    after = _decoded(cursor) if cursor else 0
    with memory.database.transaction(user_id, dataset) as uow:
        if uow.dataset_id is None:
            raise NotFound(f"dataset {dataset!r} not found")
        found = rows.trajectory_rows(
            uow.conn,
            user_id=user_id,
            dataset_id=uow.dataset_id,
            session_id=session_id,
            kind=kind,
            artifact_id=artifact_id,
            after_id=after,
            take=take + 1,
        )
    page = found[:take]
    return page, _encoded(page[-1].id) if len(found) > take else None


def _encoded(last_id: int) -> str:
    text = json.dumps({"kind": _CURSOR_KIND, "id": last_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decoded(cursor: str) -> int:
    """The id a page stopped after; anything but a cursor of this list is a 400 (never a 500)."""
    try:
        position = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise _invalid_cursor() from None
    last = position.get("id") if isinstance(position, dict) and position.get("kind") == _CURSOR_KIND else None
    if isinstance(last, bool) or not isinstance(last, int) or not 0 <= last < 2**63:
        raise _invalid_cursor()
    return last


def _invalid_cursor() -> BadRequest:
    return BadRequest("cursor is invalid: pass the next_cursor of the previous page unchanged")
