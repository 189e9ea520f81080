"""Timeseries: series of (time, value) points a dataset holds beside its graph, each anchored to what
it is about: an entity, a fact, or an artifact (over a window of time).

A series is known in its dataset by its key and field ("AAPL", "close"; the field "value" unless
given), as the gligabao server knows it: a series sent again adds its points to the stored one, a
time it holds already taking the new value, and its anchors (an anchor given again takes its new
role and window). Its statistics are computed from its points whenever it is read (db/series.py).

Anchors name what exists: `{"entity_id": 12}`, `{"edge_id": 7}`, `{"artifact_id": 3, "window":
[start, end]}`, an entity selector `{"entity": {"name": "Apple", "type": "organization"}}` (the
dataset's entity of that normalized name) or an edge selector `{"edge": {"source": "Alice",
"relation": "works_at", "target": "Acme"}}` (a live fact). Within remember, `{"artifact": true}` is
the remembered text, and a series without anchors is anchored to it. An anchor that names nothing
of the dataset is a 400 naming it, and nothing of the request is written.

Used by POST /v1/gb/timeseries and the reads of api/routes/timeseries.py, by remember
(`store_series` in its transaction) and by query (`context_series`, `render_series_lines`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from fractions import Fraction
from itertools import pairwise
from typing import Any

from gligabao.db import series as rows
from gligabao.db.connection import UnitOfWork
from gligabao.errors import BadRequest, NotFound
from gligabao.limits import DEFAULT_LIMITS, Limits
from gligabao.memory.cursors import decode_cursor, encode_cursor, row_id
from gligabao.memory.extraction import relation_name
from gligabao.memory.names import normalized_name
from gligabao.memory.ports import Memory
from gligabao.memory.readback import page_size
from gligabao.timefmt import day_or_instant

# The schema's checks (migration 0046): a key and a field in bytes of UTF-8, the rest in characters.
KEY_MAX_BYTES = 256
FIELD_MAX_BYTES = 64
NAME_MAX_CHARS = 256
LABEL_MAX_CHARS = 64  # a unit, a frequency, an anchor's role
DEFAULT_FIELD = "value"
# GET /v1/gb/timeseries/{id}: points a response holds (100,000 are about 3.3 MB of JSON, within
# the 6 MB of a Lambda response), as the gligabao server reads them.
POINTS_DEFAULT = 1000
POINTS_MAX = 100_000
FLAT_PERCENT = 1.0  # a change of at most 1% either way is flat (the gligabao server's rule)
NO_ARTIFACT = "this request creates no artifact to anchor to"


# --- what a request brings ------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    at: datetime  # aware
    value: float  # finite


@dataclass(frozen=True)
class EntitySelector:
    """The dataset's entity of this name (compared normalized), of this type when one is given."""

    name: str
    type: str | None = None


@dataclass(frozen=True)
class EdgeSelector:
    """The dataset's live fact from the entity named `source` to the one named `target`."""

    source: str
    relation: str
    target: str


@dataclass(frozen=True)
class Anchor:
    """Exactly one of: an id (`entity_id`, `edge_id`, `artifact_id`), a selector (`entity`, `edge`)
    or `this_artifact` (within remember: the remembered text); a `role` ("price") and a `window`
    (start, end: the part of the series it is about), each optional."""

    entity_id: int | None = None
    edge_id: int | None = None
    artifact_id: int | None = None
    entity: EntitySelector | None = None
    edge: EdgeSelector | None = None
    this_artifact: bool = False
    role: str | None = None
    window: tuple[datetime, datetime] | None = None

    def label(self) -> str:
        """How a message names it (the gligabao server's words)."""
        if self.entity is not None:
            return f'entity "{self.entity.name}"'
        if self.edge is not None:
            return f"fact {self.edge.source} -{self.edge.relation}-> {self.edge.target}"
        if self.entity_id is not None:
            return f"entity {self.entity_id}"
        if self.edge_id is not None:
            return f"edge {self.edge_id}"
        return f"artifact {self.artifact_id}" if self.artifact_id is not None else "artifact"


@dataclass(frozen=True)
class SeriesInput:
    """A series as a request brings it. `name`, `unit` and `frequency` None: a stored series keeps
    its own. `provider`: the timeseries provider it was fetched from ("" for the caller's)."""

    key: str
    points: Sequence[Point]
    field: str = DEFAULT_FIELD
    name: str | None = None
    unit: str | None = None
    frequency: str | None = None
    anchors: Sequence[Anchor] = ()
    provider: str = ""

    @property
    def source(self) -> str:
        return "fetched" if self.provider else "supplied"


def checked_series(series: Sequence[SeriesInput], limits: Limits = DEFAULT_LIMITS) -> None:
    """The rules of a request's series, each a 400 naming the series (`series[0]: ...`) and the
    limit it passes: at least one series and at most GB_MAX_SERIES_PER_REQUEST, each key once."""
    if not series:
        raise BadRequest("series is required")
    most = limits.max_series_per_request
    if len(series) > most:
        raise BadRequest(f"series: at most {most} series per request (GB_MAX_SERIES_PER_REQUEST)")
    seen: set[tuple[str, str, str]] = set()
    for n, one in enumerate(series):
        _check_one(one, limits, f"series[{n}]")
        identity = (one.provider, one.key, one.field)
        if identity in seen:
            raise BadRequest(f'series[{n}]: key "{one.key}" with field "{one.field}" is given twice')
        seen.add(identity)


def _check_one(series: SeriesInput, limits: Limits, where: str) -> None:
    for what, text in (("key", series.key), ("field", series.field)):
        if not text.strip():
            raise BadRequest(f"{where}: {what} is required")
    for what, text, most in (("key", series.key, KEY_MAX_BYTES), ("field", series.field, FIELD_MAX_BYTES)):
        if len(text.encode()) > most:
            raise BadRequest(f"{where}: {what} is longer than {most} bytes")
    for what, text, most in (
        ("name", series.name or "", NAME_MAX_CHARS),
        ("unit", series.unit or "", LABEL_MAX_CHARS),
        ("frequency", series.frequency or "", LABEL_MAX_CHARS),
        ("provider", series.provider, LABEL_MAX_CHARS),
    ):
        if len(text) > most:
            raise BadRequest(f"{where}: {what} is longer than {most} characters")
    if not series.points:
        raise BadRequest(f"{where}: points are required (at least one)")
    if len(series.points) > limits.max_points_per_series:
        raise BadRequest(
            f"{where}: at most {limits.max_points_per_series} points per series "
            "(GB_MAX_POINTS_PER_SERIES; use several requests for more)"
        )
    for n, point in enumerate(series.points):
        if point.at.tzinfo is None or point.at.utcoffset() is None:
            raise BadRequest(f"{where}: points[{n}]: the time of a point needs an offset (e.g. Z)")
        if isinstance(point.value, bool) or not math.isfinite(point.value):
            raise BadRequest(f"{where}: points[{n}]: the value of a point must be a finite number")
    if len(series.anchors) > limits.max_anchors_per_series:
        raise BadRequest(
            f"{where}: at most {limits.max_anchors_per_series} anchors per series (GB_MAX_ANCHORS_PER_SERIES)"
        )
    for n, anchor in enumerate(series.anchors):
        check_anchor(anchor, f"{where}: anchors[{n}]: ")


def check_anchor(anchor: Anchor, where: str = "") -> None:
    """Exactly one thing named; a role of at most 64 characters, a window not ending before it
    starts (a 400, its message after `where`)."""
    named = [
        anchor.entity_id is not None,
        anchor.edge_id is not None,
        anchor.artifact_id is not None,
        anchor.entity is not None,
        anchor.edge is not None,
        anchor.this_artifact,
    ]
    if sum(named) != 1:
        raise BadRequest(
            f"{where}exactly one of artifact, artifact_id, entity, entity_id, edge and edge_id is required"
        )
    if anchor.role is not None and len(anchor.role) > LABEL_MAX_CHARS:
        raise BadRequest(f"{where}role is longer than {LABEL_MAX_CHARS} characters")
    if anchor.window is not None and anchor.window[1] < anchor.window[0]:
        raise BadRequest(f"{where}window ends before it starts")


def merged_points(points: Sequence[Point]) -> list[Point]:
    """One point per time, in time order: of points at the same time, the last one given."""
    by_time: dict[datetime, float] = {}
    for point in points:
        by_time[point.at] = point.value  # aware datetimes of one instant are equal, whatever the offset
    return [Point(at, value) for at, value in sorted(by_time.items())]


# --- statistics ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """Two consecutive points: the largest move of a series relative to where it started."""

    start: datetime
    end: datetime
    from_value: float
    to_value: float

    @property
    def percent(self) -> float | None:
        return _finite((self.to_value - self.from_value) / abs(self.from_value) * 100)


@dataclass(frozen=True)
class Stats:
    count: int
    first_ts: datetime
    first: float
    last_ts: datetime
    last: float
    min: float
    min_ts: datetime  # the first time the lowest value is reached
    max: float
    max_ts: datetime
    mean: float
    largest_move: Move | None = None  # none when no move starts from a value other than 0

    @property
    def change(self) -> float | None:
        """last - first (None where it overflows)."""
        return _finite(self.last - self.first)

    @property
    def pct_change(self) -> float | None:
        """The change relative to the first value, in percent; None from 0."""
        if self.first == 0 or self.change is None:
            return None
        return _finite(self.change / abs(self.first) * 100)

    @property
    def trend(self) -> str:
        """up, down, or flat when the change is within 1% either way (or none at all)."""
        percent = self.pct_change
        if percent is not None and abs(percent) <= FLAT_PERCENT:
            return "flat"
        if self.last > self.first:
            return "up"
        return "down" if self.last < self.first else "flat"


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def stats_of(points: Sequence[Point]) -> Stats | None:
    """The statistics of points (one per time), as the database computes them; None without any."""
    ordered = sorted(points, key=lambda point: point.at)
    if not ordered:
        return None
    lowest = min(ordered, key=lambda point: point.value)  # min() keeps the first of equals
    highest = max(ordered, key=lambda point: point.value)
    moves = [
        Move(a.at, b.at, a.value, b.value)
        for a, b in pairwise(ordered)
        if a.value != 0 and b.value != a.value
    ]
    return Stats(
        count=len(ordered),
        first_ts=ordered[0].at,
        first=ordered[0].value,
        last_ts=ordered[-1].at,
        last=ordered[-1].value,
        min=lowest.value,
        min_ts=lowest.at,
        max=highest.value,
        max_ts=highest.at,
        mean=_exact_mean([point.value for point in ordered]),
        largest_move=max(moves, key=_move_size, default=None),
    )


def _exact_mean(values: Sequence[float]) -> float:
    return float(sum(map(Fraction, values)) / len(values))


def _move_size(move: Move) -> Fraction:
    return abs((Fraction(move.to_value) - Fraction(move.from_value)) / Fraction(move.from_value))


# --- what is stored ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredAnchor:
    type: str  # entity, edge or artifact
    id: int
    role: str = ""
    window_start: datetime | None = None
    window_end: datetime | None = None
    label: str | None = None  # the entity's name, or the fact's "source -relation-> target"


@dataclass(frozen=True)
class StoredSeries:
    id: int
    key: str
    field: str
    name: str  # "" when none was given
    unit: str
    frequency: str
    source: str  # supplied (by the caller) or fetched
    provider: str  # the provider it was fetched from; "" for the caller's
    created_at: datetime
    updated_at: datetime
    stats: Stats | None  # over every stored point
    anchors: tuple[StoredAnchor, ...] = ()
    created: bool | None = None  # written by this request: new, or a stored key
    points_written: int | None = None  # written by this request: its distinct times

    @property
    def title(self) -> str:
        return self.name or self.key


@dataclass(frozen=True)
class AttachedSeries:
    dataset: str
    series: list[StoredSeries]


@dataclass(frozen=True)
class SeriesPage:
    dataset: str
    series: list[StoredSeries]  # by id
    next_cursor: str | None
    entity_id: int | None = None  # the entity whose series these are (GET /v1/gb/entities/{id}/timeseries)


@dataclass(frozen=True)
class SeriesPoints:
    """A series with its points in a range (at most `limit` of them, earliest first)."""

    dataset: str
    series: StoredSeries
    points: list[Point]
    truncated: bool  # more points in the range than the response holds
    range_stats: Stats | None  # of every point in the range (a range was asked for and holds some)


@dataclass(frozen=True)
class ContextSeries:
    """A series as a query's context shows it: its statistics and its latest points."""

    series: StoredSeries
    latest: tuple[Point, ...] = field(default_factory=tuple)  # oldest first


# --- writing -------------------------------------------------------------------------------------


def attach(memory: Memory, user_id: str, dataset: str, series: Sequence[SeriesInput]) -> AttachedSeries:
    """POST /v1/gb/timeseries: the series stored in the user's existing dataset (NotFound without
    it), in one transaction: an anchor that names nothing, or a series without anchors (there is no
    artifact here to anchor it to), is a 400 and nothing is written."""
    checked_series(series, memory.limits)
    with memory.database.transaction(user_id, dataset) as uow:
        if uow.dataset_id is None:
            raise NotFound(f"dataset {dataset!r} not found")
        rows.lock_dataset(uow.conn, uow.dataset_id)
        stored = store_series(uow, uow.dataset_id, series, limits=memory.limits)
    return AttachedSeries(dataset, stored)


def store_series(
    uow: UnitOfWork,
    dataset_id: int,
    series: Sequence[SeriesInput],
    artifact_id: int | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> list[StoredSeries]:
    """Store the series in the dataset, in the caller's transaction (which should hold the
    dataset's lock, as remember's does), and return them as stored, in the order given.

    `artifact_id`: the artifact of the request (remember's text): a series without anchors, and an
    `{"artifact": true}` anchor, are anchored to it; without one they are a 400. Entity and edge
    anchors are looked up in the dataset as it is now (after remember wrote its graph, so they may
    name what the text yielded); one that names nothing is a 400 naming it, before anything is
    written. Three statements: the anchors' lookup, the writes, the read-back."""
    checked_series(series, limits)
    anchors = [_anchors_of(one, n, artifact_id) for n, one in enumerate(series)]
    resolved = _resolved(uow, dataset_id, series, anchors)
    to_write = [
        rows.SeriesRow(
            key=one.key,
            field=one.field,
            provider=one.provider,
            source=one.source,
            name=one.name,
            unit=one.unit,
            frequency=one.frequency,
            points=[(point.at, float(point.value)) for point in merged_points(one.points)],
            anchors=found,
        )
        for one, found in zip(series, resolved, strict=True)
    ]
    written = rows.write_series(uow.conn, dataset_id, to_write)
    read = {
        stored.id: stored
        for stored in _stored(rows.series_by_ids(uow.conn, dataset_id, [w["id"] for w in written]))
    }
    return [
        replace(read[w["id"]], created=w["created"], points_written=len(row.points))
        for w, row in zip(written, to_write, strict=True)
    ]


def _anchors_of(series: SeriesInput, n: int, artifact_id: int | None) -> list[Anchor]:
    """The series' anchors, the request's artifact in place of `{"artifact": true}` (and of no
    anchor at all)."""
    if not series.anchors:
        if artifact_id is None:
            raise BadRequest(f"series[{n}]: anchors are required ({NO_ARTIFACT})")
        return [Anchor(artifact_id=artifact_id)]
    anchors = []
    for m, anchor in enumerate(series.anchors):
        if anchor.this_artifact:
            if artifact_id is None:
                raise BadRequest(f"series[{n}]: anchors[{m}]: artifact: {NO_ARTIFACT}")
            anchor = replace(anchor, this_artifact=False, artifact_id=artifact_id)
        anchors.append(anchor)
    return anchors


def _resolved(
    uow: UnitOfWork, dataset_id: int, series: Sequence[SeriesInput], anchors: list[list[Anchor]]
) -> list[list[rows.AnchorRow]]:
    """Each series' anchors as rows of the dataset, looked up in one statement; a 400 naming the
    first that names nothing."""
    flat = [(n, anchor) for n, of_series in enumerate(anchors) for anchor in of_series]
    found = rows.resolve_anchors(uow.conn, dataset_id, [_wanted(anchor) for _, anchor in flat])
    resolved: list[dict[tuple[str, int], rows.AnchorRow]] = [{} for _ in series]
    for (n, anchor), row_id_ in zip(flat, found, strict=True):
        if row_id_ is None:
            raise BadRequest(f'series "{series[n].key}": series anchor not found: {anchor.label()}')
        row = _anchor_row(anchor, row_id_)
        resolved[n][_named_row(row)] = row  # a row named twice is one anchor: the last one given
    return [list(of_series.values()) for of_series in resolved]


def _named_row(row: rows.AnchorRow) -> tuple[str, int]:
    if row.entity_id is not None:
        return ("entity", row.entity_id)
    if row.edge_id is not None:
        return ("edge", row.edge_id)
    return ("artifact", row.artifact_id or 0)


def _wanted(anchor: Anchor) -> rows.WantedAnchor:
    if anchor.entity is not None:
        kind = (anchor.entity.type or "").strip().lower()
        return rows.WantedAnchor("entity", name=normalized_name(anchor.entity.name), type=kind or None)
    if anchor.edge is not None:
        return rows.WantedAnchor(
            "edge",
            name=normalized_name(anchor.edge.source),
            relation=relation_name(anchor.edge.relation),
            relation_given=anchor.edge.relation.strip(),
            target=normalized_name(anchor.edge.target),
        )
    if anchor.entity_id is not None:
        return rows.WantedAnchor("entity_id", id=anchor.entity_id)
    if anchor.edge_id is not None:
        return rows.WantedAnchor("edge_id", id=anchor.edge_id)
    return rows.WantedAnchor("artifact_id", id=anchor.artifact_id)


def _anchor_row(anchor: Anchor, found: int) -> rows.AnchorRow:
    start, end = anchor.window or (None, None)
    row = rows.AnchorRow(role=anchor.role or "", window_start=start, window_end=end)
    if anchor.entity is not None or anchor.entity_id is not None:
        return replace(row, entity_id=found)
    if anchor.edge is not None or anchor.edge_id is not None:
        return replace(row, edge_id=found)
    return replace(row, artifact_id=found)


# --- reading -------------------------------------------------------------------------------------


def list_series(
    memory: Memory, user_id: str, dataset: str, *, limit: int | None = None, cursor: str | None = None
) -> SeriesPage:
    """A page of the dataset's series by id, with their statistics and anchors; NotFound for a
    dataset the user does not have."""
    take = page_size(memory.limits, limit)
    after = decode_cursor(cursor, "series", after=row_id)["after"] if cursor else 0
    with memory.database.transaction(user_id) as uow:
        found = rows.series_page(uow.conn, user_id=user_id, dataset=dataset, after_id=after, take=take)
    if found is None:
        raise NotFound(f"dataset {dataset!r} not found")
    return _page(dataset, _stored(found), take, "series")


def entity_series(
    memory: Memory, user_id: str, entity_id: int, *, limit: int | None = None, cursor: str | None = None
) -> SeriesPage:
    """A page of the series anchored to the entity or to one of its facts; NotFound for an entity
    of none of the user's datasets."""
    take = page_size(memory.limits, limit)
    after = decode_cursor(cursor, "entity-series", after=row_id)["after"] if cursor else 0
    with memory.database.transaction(user_id) as uow:
        found = rows.entity_series_page(
            uow.conn, user_id=user_id, entity_id=entity_id, after_id=after, take=take
        )
    if found is None:
        raise NotFound(f"entity {entity_id} not found")
    dataset, series = found
    return replace(_page(dataset, _stored(series), take, "entity-series"), entity_id=entity_id)


def _page(dataset: str, series: list[StoredSeries], take: int, kind: str) -> SeriesPage:
    more = len(series) > take
    series = series[:take]
    return SeriesPage(dataset, series, encode_cursor(kind, after=series[-1].id) if more else None)


def read_series(
    memory: Memory,
    user_id: str,
    series_id: int,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    limit: int | None = None,
) -> SeriesPoints:
    """The user's series with its points in [start, end) (each bound optional), at most `limit`
    of them earliest first (POINTS_DEFAULT, at most POINTS_MAX), and the statistics of the range's
    points when a range is given; NotFound for a series of none of the user's datasets."""
    take = POINTS_DEFAULT if limit is None else limit
    if not 1 <= take <= POINTS_MAX:
        raise BadRequest(f"limit must be between 1 and {POINTS_MAX}")
    with memory.database.transaction(user_id) as uow:
        row = rows.series_with_points(
            uow.conn, user_id=user_id, series_id=series_id, start=start, end=end, take=take
        )
    if row is None:
        raise NotFound("timeseries not found")
    points = [
        Point(at, float(value)) for at, value in zip(row["point_times"], row["point_values"], strict=True)
    ]
    ranged = start is not None or end is not None
    return SeriesPoints(
        dataset=row["dataset"],
        series=_stored([row])[0],
        points=points[:take],
        truncated=len(points) > take,
        range_stats=_stats(row["range_stats"]) if ranged else None,
    )


def context_series(
    uow: UnitOfWork, dataset_id: int, entity_ids: Sequence[int], edge_ids: Sequence[int], limits: Limits
) -> list[ContextSeries]:
    """The series a query's context shows, in the caller's transaction: at most
    GB_CONTEXT_SERIES of those anchored to one of the context's entities or facts, each with its
    statistics, anchors and GB_CONTEXT_SERIES_POINTS latest points. The ids come best first: a
    series anchored to an earlier entity comes first, then one anchored to an earlier fact, then
    the most recently updated. One statement; none without an id. `render_series_lines` writes
    them for the prompt."""
    found = rows.series_for_context(
        uow.conn, dataset_id, entity_ids, edge_ids, limits.context_series, limits.context_series_points
    )
    return [
        ContextSeries(
            series,
            tuple(
                Point(at, float(value))
                for at, value in zip(row["point_times"], row["point_values"], strict=True)
            ),
        )
        for series, row in zip(_stored(found), found, strict=True)
    ]


def _stored(found: Sequence[dict[str, Any]]) -> list[StoredSeries]:
    return [
        StoredSeries(
            id=row["id"],
            key=row["key"],
            field=row["field"],
            name=row["name"],
            unit=row["unit"],
            frequency=row["frequency"],
            source=row["source"],
            provider=row["provider"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            stats=_stats(row["stats"]),
            anchors=tuple(_anchor(anchor) for anchor in row["anchors"]),
        )
        for row in found
    ]


def _stats(found: dict[str, Any] | None) -> Stats | None:
    if not found:
        return None
    move = found.get("largest_move")
    return Stats(
        count=found["count"],
        first_ts=_time(found["first_ts"]),
        first=float(found["first"]),
        last_ts=_time(found["last_ts"]),
        last=float(found["last"]),
        min=float(found["min"]),
        min_ts=_time(found["min_ts"]),
        max=float(found["max"]),
        max_ts=_time(found["max_ts"]),
        mean=float(found["mean"]),
        largest_move=Move(
            _time(move["start"]), _time(move["end"]), float(move["from_value"]), float(move["to_value"])
        )
        if move
        else None,
    )


def _anchor(found: dict[str, Any]) -> StoredAnchor:
    start, end = found.get("window_start"), found.get("window_end")
    return StoredAnchor(
        type=found["type"],
        id=found["id"],
        role=found.get("role") or "",
        window_start=_time(start) if start else None,
        window_end=_time(end) if end else None,
        label=found.get("label"),
    )


def _time(text: str) -> datetime:
    """A timestamptz as jsonb writes it (ISO 8601 with its offset)."""
    return datetime.fromisoformat(text)


# --- the prompt ------------------------------------------------------------------------------------


def render_series_lines(series: Sequence[ContextSeries]) -> list[str]:
    """One line per series for a query's prompt: its id, key and name, unit, what it is about, its
    span, last, lowest, highest and mean values, and its latest points, e.g.
    `[series 3] AAPL.close (USD) of Apple(12): 30 points 2025-01-01..2025-01-30; last 235.1
    (2025-01-30); min 220.0 (2025-01-03); max 236.2 (2025-01-29); mean 229.4; latest: 2025-01-28
    233.0, 2025-01-29 236.2, 2025-01-30 235.1`."""
    return [line for line in (_line(one) for one in series) if line]


def _line(one: ContextSeries) -> str | None:
    series, stats = one.series, one.series.stats
    if stats is None:
        return None
    known_as = series.key if series.field == DEFAULT_FIELD else f"{series.key}/{series.field}"
    title = known_as if not series.name or series.name == series.key else f"{known_as} {_quoted(series.name)}"
    unit = f" ({_clean(series.unit)})" if series.unit else ""
    about = ", ".join(_about(anchor) for anchor in series.anchors)
    parts = [
        f"[series {series.id}] {_clean(title)}{unit}{f' of {about}' if about else ''}: "
        f"{stats.count} point{'s' if stats.count != 1 else ''} {_day(stats.first_ts)}..{_day(stats.last_ts)}",
        f"last {_number(stats.last)} ({_day(stats.last_ts)})",
        f"min {_number(stats.min)} ({_day(stats.min_ts)})",
        f"max {_number(stats.max)} ({_day(stats.max_ts)})",
        f"mean {_number(stats.mean)}",
    ]
    if one.latest:
        parts.append("latest: " + ", ".join(f"{_day(p.at)} {_number(p.value)}" for p in one.latest))
    return "; ".join(parts)


def _about(anchor: StoredAnchor) -> str:
    window, role = "", f" as {_clean(anchor.role)}" if anchor.role else ""
    if anchor.window_start is not None and anchor.window_end is not None:
        window = f" over {_day(anchor.window_start)}..{_day(anchor.window_end)}"
    if anchor.type == "entity":
        return f"{_clean(anchor.label or '')}({anchor.id}){role}{window}"
    if anchor.type == "edge":
        return f"{_clean(anchor.label or '')} (fact {anchor.id}){role}{window}"
    return f"artifact {anchor.id}{role}{window}"


def _quoted(name: str) -> str:
    return f'"{name}"'


def _clean(text: str) -> str:
    """One line of text: a caller's names never break the prompt's lines."""
    return " ".join(text.split())


def _day(moment: datetime) -> str:
    return day_or_instant(moment) or ""


def _number(value: float) -> str:
    """At most 4 decimals, and a decimal point on a whole value (220.0); %g for the very small."""
    if value != 0 and abs(value) < 0.0001:
        return f"{value:g}"
    rounded = round(value, 4)
    return repr(rounded) if abs(rounded) < 1e16 else f"{value:g}"
