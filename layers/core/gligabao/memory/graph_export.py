"""The graph export (GET /v1/gb/graph): a dataset's entities and edges with their ids and every
time they carry, a page at a time.

A page holds at most `limit` rows: the entities first (by name), then the edges (in the order
the graph learned them); the live edges only, unless `include_expired` adds the superseded ones.
`next_cursor` is where the next page starts (None after the last): an opaque, URL-safe string
holding a position, never a row of its own, so a cursor made up or taken from another dataset
only ever reads the caller's own dataset. Each page is one statement (db/graph_export.py) inside
the user's transaction: memory and time per page are bounded by `limit`, at any depth.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass

from gligabao.db import graph_export
from gligabao.db.graph_export import GraphEntity, PageStart
from gligabao.errors import BadRequest, NotFound
from gligabao.memory.ports import Memory
from gligabao.model import StoredEdge
from gligabao.timefmt import parse_rfc3339, rfc3339

__all__ = ["GraphEntity", "GraphPage", "GraphRequest", "export_page"]


@dataclass(frozen=True)
class GraphRequest:
    user_id: str
    dataset: str = "main"
    include_expired: bool = False
    limit: int | None = None  # rows of the page; None: the configured default
    cursor: str | None = None  # the previous page's next_cursor; None: the first page


@dataclass(frozen=True)
class GraphPage:
    dataset: str
    entities: list[GraphEntity]
    edges: list[StoredEdge]
    next_cursor: str | None


def export_page(
    memory: Memory, request: GraphRequest, fits: Callable[[GraphPage], bool] | None = None
) -> GraphPage:
    """One page of the export of the user's dataset (NotFound when the user has no such dataset).

    `fits(page)`, called on every page read, says whether it can be sent (its body within what a
    response holds): a page that does not is read again with half the rows, down to one row."""
    limits = memory.limits
    rows = request.limit if request.limit is not None else limits.graph_page_rows
    if not 1 <= rows <= limits.graph_page_max_rows:
        raise BadRequest(f"limit must be between 1 and {limits.graph_page_max_rows}")
    start = decode_cursor(request.cursor)
    while True:
        with memory.database.transaction(request.user_id, request.dataset) as uow:
            if uow.dataset_id is None:
                raise NotFound(f"dataset {request.dataset!r} not found")
            found = graph_export.page_rows(
                uow.conn,
                dataset_id=uow.dataset_id,
                start=start,
                rows=rows,
                include_expired=request.include_expired,
            )
        page = _page(request.dataset, found, rows)
        if fits is None or fits(page) or rows == 1:
            return page
        rows //= 2


def _page(dataset: str, found: graph_export.PageRows, rows: int) -> GraphPage:
    """The first `rows` rows found; a cursor after the last of them when there were more."""
    entities = found.entities[:rows]
    edges = found.edges[: rows - len(entities)]
    more = len(found.entities) + len(found.edges) > rows
    if not more:
        cursor = None
    elif edges:
        cursor = encode_cursor(PageStart(False, after_created_at=edges[-1].created_at, after_id=edges[-1].id))
    else:
        cursor = encode_cursor(PageStart(True, after_name=entities[-1].normalized_name))
    return GraphPage(dataset, entities, edges, cursor)


# --- the cursor: a position, base64url of a small JSON ---------------------------------------


def encode_cursor(start: PageStart) -> str:
    position = (
        {"entity_after": start.after_name}
        if start.in_entities
        else {"edge_after": [rfc3339(start.after_created_at), start.after_id]}
    )
    text = json.dumps(position, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> PageStart:
    """The position of a cursor this export wrote; BadRequest for anything else."""
    if cursor is None:
        return PageStart()
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        position = json.loads(text)
        if isinstance(position, dict) and set(position) == {"entity_after"}:
            name = position["entity_after"]
            if isinstance(name, str) and _storable(name):
                return PageStart(True, after_name=name)
        elif isinstance(position, dict) and set(position) == {"edge_after"}:
            moment, edge_id = position["edge_after"]
            if isinstance(moment, str) and type(edge_id) is int and 0 <= edge_id < 2**63:
                return PageStart(False, after_created_at=parse_rfc3339(moment), after_id=edge_id)
    except (ValueError, TypeError, UnicodeDecodeError, binascii.Error, OverflowError):
        pass
    raise BadRequest("cursor is not a next_cursor of this export")


def _storable(text: str) -> bool:
    """Text PostgreSQL can be sent: no NUL, no unpaired surrogate."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return "\x00" not in text
