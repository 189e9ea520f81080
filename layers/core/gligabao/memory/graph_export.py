"""The graph export (GET /v1/gb/graph): a dataset's entities and edges with their ids and every
time they carry, then its timeseries with their points and anchors, a page at a time.

A page holds at most `limit` rows: the entities first (by name), then the edges (in the order
the graph learned them), then the series (by id, each one row with all its points); the live
edges only, unless `include_expired` adds the superseded ones.
`next_cursor` is where the next page starts (None after the last): an opaque, URL-safe string
holding a position, never a row of its own, so a cursor made up or taken from another dataset
only ever reads the caller's own dataset. Each page is one statement (db/graph_export.py) inside
the user's transaction: memory and time per page are bounded by `limit`, at any depth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gligabao.db import graph_export
from gligabao.db.graph_export import GraphEntity, GraphSeries, PageStart
from gligabao.errors import BadRequest, NotFound
from gligabao.memory import cursors
from gligabao.memory.ports import Memory
from gligabao.model import StoredEdge

__all__ = ["GraphEntity", "GraphPage", "GraphRequest", "GraphSeries", "export_page"]


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
    series: list[GraphSeries] = field(default_factory=list)


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
    series = found.series[: rows - len(entities) - len(edges)]
    more = len(found.entities) + len(found.edges) + len(found.series) > rows
    if not more:
        cursor = None
    elif series:
        cursor = encode_cursor(PageStart(False, in_series=True, after_series_id=series[-1].id))
    elif edges:
        cursor = encode_cursor(PageStart(False, after_created_at=edges[-1].created_at, after_id=edges[-1].id))
    else:
        cursor = encode_cursor(PageStart(True, after_name=entities[-1].normalized_name))
    return GraphPage(dataset, entities, edges, cursor, series)


# --- the cursor: a position among the entities (by normalized name), among the edges (by
# creation time and id), or among the series (by id), written and read as every cursor
# (memory/cursors.py).

ENTITY_NAME_MAX_CHARS = 1000  # above any name the graph stores (limits.entity_name_max_chars, at most 500)
_CURSORS = {
    "graph-entities": {"after": cursors.text(ENTITY_NAME_MAX_CHARS)},
    "graph-edges": {"created_at": cursors.time, "id": cursors.row_id},
    "graph-series": {"after": cursors.row_id},
}


def encode_cursor(start: PageStart) -> str:
    if start.in_series:
        return cursors.encode_cursor("graph-series", after=start.after_series_id)
    if start.in_entities:
        return cursors.encode_cursor("graph-entities", after=start.after_name)
    return cursors.encode_cursor("graph-edges", created_at=start.after_created_at, id=start.after_id)


def decode_cursor(cursor: str | None) -> PageStart:
    """The position of a cursor this export wrote; BadRequest for anything else."""
    if cursor is None:
        return PageStart()
    kind, position = cursors.decode_cursor_of(cursor, _CURSORS)
    if kind == "graph-entities":
        return PageStart(True, after_name=position["after"])
    if kind == "graph-series":
        return PageStart(False, in_series=True, after_series_id=position["after"])
    return PageStart(False, after_created_at=position["created_at"], after_id=position["id"])
