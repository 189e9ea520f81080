"""The HTTP contract of timeseries: a series as a request brings it (`SeriesIn`, the reference
client's shape, taken by POST /v1/gb/timeseries and by remember's `timeseries.series` alike),
the body of POST /v1/gb/timeseries, and the series as the routes answer them.

`{"key": "AAPL.close", "unit": "USD", "points": [["2025-01-30T00:00:00Z", 235.1]], "anchors":
[{"entity": {"name": "Apple", "type": "organization"}}]}`. The gligabao server's fields are taken
(`field`, `frequency`, an anchor's `role` and `window`); any other is a 400 naming it.
A list of series (`SeriesList`) is checked as a whole, every refusal naming the series as the
gligabao server does: `series[0]: points[3]: the value of a point must be a number`.

The memory core is imported where a request is checked, not with the module: the client reads
these models without it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from gligabao.api.models import absent
from gligabao.api.validation import (
    CONTROL_RANGES,
    SPACE_RANGES,
    TIME_PATTERN,
    DatasetField,
    UserId,
    character_class,
    rfc3339_time,
    server_bundle,
)
from gligabao.errors import BadRequest
from gligabao.limits import Limits
from gligabao.timefmt import rfc3339

if TYPE_CHECKING:
    from gligabao.memory import timeseries

MAX_ROW_ID = 2**63 - 1
# memory/timeseries.py and migration 0046 hold the same: a key and a field in bytes of UTF-8 (at
# most as many characters), the rest in characters.
KEY_MAX_BYTES = 256
FIELD_MAX_BYTES = 64
NAME_MAX_CHARS = 256
LABEL_MAX_CHARS = 64

_CONTROL = character_class(CONTROL_RANGES)
_SPACE_OR_CONTROL = character_class(SPACE_RANGES, CONTROL_RANGES)
# No control character (a key, name or unit is one line of a prompt); a key not blank.
ONE_LINE_PATTERN = f"^[^{_CONTROL}]*$"
KEY_PATTERN = f"^[^{_CONTROL}]*[^{_SPACE_OR_CONTROL}][^{_CONTROL}]*$"
_ONE_LINE = re.compile(ONE_LINE_PATTERN[1:-1])
_KEY = re.compile(KEY_PATTERN[1:-1])


def _limits() -> Limits:
    return server_bundle().limits


class Bounded:
    """A list's JSON schema as generated, with the bounds the container's limits set (built when the
    OpenAPI document is, as `Documented`)."""

    def __init__(self, bounds: Callable[[], dict[str, Any]]):
        self.bounds = bounds

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return {**handler(core_schema), **self.bounds()}


# --- a point: [time, value] ------------------------------------------------------------------------


def _point(value: Any) -> tuple[datetime, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError("a point must be a pair [time, value]")
    at, number = value
    if not isinstance(at, str):
        raise ValueError("the time of a point must be an RFC 3339 string")
    try:
        moment = rfc3339_time(at)
    except ValueError:
        raise ValueError(
            f"the time {_shown(at)} of a point must be RFC 3339 with an offset, e.g. 2025-01-31T09:00:00Z"
        ) from None
    if isinstance(number, bool) or not isinstance(number, int | float):
        raise ValueError("the value of a point must be a number")
    try:
        value = float(number)  # an integer of 400 digits is out of a double's range
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        raise ValueError("the value of a point must be a finite number")
    return moment, value  # type: ignore[return-value]


def _shown(text: str) -> str:
    """A caller's value quoted in a message, cut short."""
    return '"' + (text if len(text) <= 40 else text[:40] + "...") + '"'


POINT_SCHEMA = {
    "type": "array",
    "prefixItems": [
        {"type": "string", "pattern": TIME_PATTERN, "description": "RFC 3339 with an offset"},
        {"type": "number", "description": "a finite number"},
    ],
    "items": False,
    "minItems": 2,
    "maxItems": 2,
    "description": "[time, value]: the time RFC 3339 with an offset, the value a number",
}
PointIn = Annotated[tuple[datetime, float], BeforeValidator(_point), WithJsonSchema(POINT_SCHEMA)]


def _points_schema() -> dict[str, Any]:
    most = _limits().max_points_per_series
    return {
        "minItems": 1,
        "maxItems": most,
        "description": f"at least one, at most {most} (GB_MAX_POINTS_PER_SERIES); of points at the same "
        "time, the last one; a time the series holds already takes the new value",
    }


# --- anchors -----------------------------------------------------------------------------------------


def _text(
    what: str,
    pattern: re.Pattern[str],
    most: int | None = None,
    *,
    required: bool = True,
    in_bytes: bool = False,
):
    def checked(value: Any) -> Any:
        if not isinstance(value, str):
            return value  # pydantic says what it should be
        if required and not value.strip():
            raise ValueError(f"{what} is required")
        if not pattern.fullmatch(value):
            raise ValueError(f"{what} must be one line, without control characters")
        if most is not None and (len(value.encode()) if in_bytes else len(value)) > most:
            raise ValueError(f"{what} is longer than {most} {'bytes' if in_bytes else 'characters'}")
        return value

    return checked


def _label(what: str, most: int, description: str) -> Any:
    """An optional one-line text of at most `most` characters (a unit, a frequency, a role)."""
    return Annotated[
        str | None,
        BeforeValidator(_text(what, _ONE_LINE, most, required=False)),
        WithJsonSchema(
            {"anyOf": [_text_schema(ONE_LINE_PATTERN, most), {"type": "null"}], "description": description}
        ),
    ]


def _text_schema(pattern: str, most: int | None = None, description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "pattern": pattern}
    if pattern == KEY_PATTERN:
        schema["minLength"] = 1
    if most is not None:
        schema["maxLength"] = most
    if description:
        schema["description"] = description
    return schema


def _named(what: str, description: str) -> Any:
    """A name a selector gives: not blank, one line."""
    return Annotated[
        str,
        BeforeValidator(_text(what, _KEY)),
        WithJsonSchema(_text_schema(KEY_PATTERN, description=description)),
    ]


class EntitySelectorIn(BaseModel):
    """`{"name": "Apple", "type": "organization"}`: the dataset's entity of this name (compared
    normalized: case and spacing aside), of this type when one is given."""

    model_config = ConfigDict(extra="forbid")

    name: _named("entity.name", "the entity's name")  # type: ignore[valid-type]
    type: str | None = Field(
        default=None, description="its type (person, organization...); any when left out"
    )


class EdgeSelectorIn(BaseModel):
    """`{"source": "Alice", "relation": "works_at", "target": "Acme"}`: the dataset's live fact of
    this relation between the entities of these names (the newest of several)."""

    model_config = ConfigDict(extra="forbid")

    source: _named("edge.source", "the source entity's name")  # type: ignore[valid-type]
    relation: _named("edge.relation", "the relation, as stored or in words (Works At = works_at)")  # type: ignore[valid-type]
    target: _named("edge.target", "the target entity's name")  # type: ignore[valid-type]


def _window(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError("window must be [start, end]")
    try:
        start, end = (rfc3339_time(bound) if isinstance(bound, str) else None for bound in value)
    except ValueError:
        start = end = None
    if start is None or end is None:
        raise ValueError("window must be two RFC 3339 times, e.g. 2025-01-01T00:00:00Z")
    return (start, end)


_TIME = {"type": "string", "pattern": TIME_PATTERN}
Window = Annotated[
    tuple[datetime, datetime] | None,
    BeforeValidator(_window),
    WithJsonSchema(
        {
            "anyOf": [
                {
                    "type": "array",
                    "prefixItems": [_TIME, _TIME],
                    "items": False,
                    "minItems": 2,
                    "maxItems": 2,
                },
                {"type": "null"},
            ],
            "description": "[start, end], RFC 3339 (start at or before end): the part of the series the "
            "anchor is about (an artifact: the time it speaks of)",
        }
    ),
]
AnchorId = Annotated[StrictInt, Field(ge=1, le=MAX_ROW_ID)]


class AnchorIn(BaseModel):
    """What a series is about: exactly one of `entity_id`, `edge_id`, `artifact_id`, `entity` (a
    selector), `edge` (a selector) and `artifact: true` (remember's text; POST /v1/gb/timeseries
    creates no artifact)."""

    model_config = ConfigDict(extra="forbid")

    entity_id: AnchorId | None = Field(default=None, description="an entity of the dataset")
    edge_id: AnchorId | None = Field(default=None, description="a fact of the dataset")
    artifact_id: AnchorId | None = Field(default=None, description="an artifact of the dataset")
    entity: EntitySelectorIn | None = Field(default=None, description="the entity of this name")
    edge: EdgeSelectorIn | None = Field(default=None, description="the live fact between these entities")
    artifact: StrictBool | None = Field(
        default=None, description="true: the artifact of this remember (false counts as left out)"
    )
    role: _label("role", LABEL_MAX_CHARS, "what the series is to it (price, subject...)") = None  # type: ignore[valid-type]
    window: Window = None

    @model_validator(mode="after")
    def _one_thing(self) -> AnchorIn:
        from gligabao.memory.timeseries import check_anchor

        try:
            check_anchor(self.domain())
        except BadRequest as error:
            raise ValueError(error.message) from None
        return self

    def domain(self) -> timeseries.Anchor:
        from gligabao.memory import timeseries

        return timeseries.Anchor(
            entity_id=self.entity_id,
            edge_id=self.edge_id,
            artifact_id=self.artifact_id,
            entity=timeseries.EntitySelector(self.entity.name, self.entity.type) if self.entity else None,
            edge=timeseries.EdgeSelector(self.edge.source, self.edge.relation, self.edge.target)
            if self.edge
            else None,
            this_artifact=bool(self.artifact),
            role=self.role or None,
            window=self.window,
        )


def _anchors_schema() -> dict[str, Any]:
    most = _limits().max_anchors_per_series
    return {
        "maxItems": most,
        "description": f"at most {most} (GB_MAX_ANCHORS_PER_SERIES); within remember, none anchors the "
        "series to the remembered text; POST /v1/gb/timeseries needs at least one",
    }


# --- a series ------------------------------------------------------------------------------------------


class SeriesIn(BaseModel):
    """One series of a request (POST /v1/gb/timeseries, remember's `timeseries.series`)."""

    model_config = ConfigDict(extra="forbid")

    key: Annotated[
        str,
        BeforeValidator(_text("key", _KEY, KEY_MAX_BYTES, in_bytes=True)),
        WithJsonSchema(
            _text_schema(
                KEY_PATTERN,
                KEY_MAX_BYTES,
                f"what the series is of (AAPL), exactly as given: at most {KEY_MAX_BYTES} bytes of UTF-8; with "
                "`field`, the series in the dataset: a stored one takes the new points",
            )
        ),
    ]
    field: Annotated[
        str,
        BeforeValidator(_text("field", _KEY, FIELD_MAX_BYTES, in_bytes=True)),
        WithJsonSchema(
            _text_schema(
                KEY_PATTERN,
                FIELD_MAX_BYTES,
                f"what of it the values measure (close, volume): at most {FIELD_MAX_BYTES} bytes; default value",
            )
        ),
    ] = "value"
    name: Annotated[
        str | None,
        BeforeValidator(_text("name", _ONE_LINE, NAME_MAX_CHARS, required=False)),
        WithJsonSchema(
            {
                "anyOf": [_text_schema(ONE_LINE_PATTERN, NAME_MAX_CHARS), {"type": "null"}],
                "description": "what it measures, shown for it (default the key); left out, a stored series "
                "keeps its own",
            }
        ),
    ] = None
    unit: _label("unit", LABEL_MAX_CHARS, "USD, °C...; left out, a stored series keeps its own") = None  # type: ignore[valid-type]
    frequency: _label(
        "frequency", LABEL_MAX_CHARS, "daily, hourly...; left out, a stored series keeps its own"
    ) = None  # type: ignore[valid-type]
    points: Annotated[list[PointIn], Bounded(_points_schema)]
    anchors: Annotated[list[AnchorIn], Bounded(_anchors_schema)] = Field(default_factory=list)

    def domain(self) -> timeseries.SeriesInput:
        """The series for the memory core (the caller's: no provider)."""
        from gligabao.memory import timeseries

        return timeseries.SeriesInput(
            key=self.key,
            field=self.field,
            name=self.name,
            unit=self.unit,
            frequency=self.frequency,
            points=tuple(timeseries.Point(at, value) for at, value in self.points),
            anchors=tuple(anchor.domain() for anchor in self.anchors),
        )


def _series_list(value: Any) -> list[SeriesIn]:
    """Every series checked, then the list as a whole (how many, each key once), each refusal
    naming the series: `series[1]: key "D" is given twice`."""
    from gligabao.memory.timeseries import checked_series

    if value is None or value == []:
        raise ValueError("series is required")
    if not isinstance(value, list):
        raise ValueError("series must be a list of series")
    most = _limits().max_series_per_request
    if len(value) > most:  # before reading any: the points of too many series are not parsed
        raise ValueError(f"series: at most {most} series per request (GB_MAX_SERIES_PER_REQUEST)")
    parsed = []
    for n, item in enumerate(value):
        try:
            parsed.append(SeriesIn.model_validate(item))
        except ValidationError as error:
            raise ValueError(f"series[{n}]: {_phrase(error.errors()[0])}") from None
    try:
        checked_series([series.domain() for series in parsed], _limits())
    except BadRequest as error:
        raise ValueError(error.message) from None
    return parsed


def _phrase(error: dict) -> str:
    """A validation error inside a series as the gligabao server words it: `anchors[0]: entity.name
    is required`, `points[3]: the time "x" of a point must be RFC 3339 ...`."""
    segments, name = [], ""
    for part in error.get("loc", ()):
        if isinstance(part, int):
            segments.append(f"{name}[{part}]")
            name = ""
        else:
            name = f"{name}.{part}" if name else str(part)
    kind = error.get("type", "")
    message = str(error.get("msg", "is invalid")).removeprefix("Value error, ")
    if kind == "missing":
        message = (
            "points are required (at least one)"
            if name == "points" and not segments
            else f"{name} is required"
        )
    elif kind == "extra_forbidden":
        message = f"{name}: unknown field"
    elif name and not message.startswith(name):
        message = f"{name}: {message}"
    return ": ".join([*segments, message])


def _series_list_schema() -> dict[str, Any]:
    most = _limits().max_series_per_request
    return {
        "minItems": 1,
        "maxItems": most,
        "description": f"at least one, at most {most} (GB_MAX_SERIES_PER_REQUEST); each key and field once",
    }


SeriesList = Annotated[list[SeriesIn], BeforeValidator(_series_list), Bounded(_series_list_schema)]


class AttachRequest(BaseModel):
    """`{"user_id": "u1", "dataset": "main", "series": [{"key": "AAPL.close", "unit": "USD",
    "points": [["2025-01-30T00:00:00Z", 235.1]], "anchors": [{"entity_id": 12}]}]}`"""

    model_config = ConfigDict(extra="forbid")

    user_id: UserId
    dataset: DatasetField
    series: SeriesList

    def domain(self) -> list[timeseries.SeriesInput]:
        return [series.domain() for series in self.series]


# --- responses ---------------------------------------------------------------------------------------


class MoveOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    start: str = Field(alias="from", description="RFC 3339: the first point of the move")
    end: str = Field(alias="to", description="RFC 3339: the next point")
    from_value: float
    to_value: float
    pct: float | None = Field(default=None, exclude_if=absent, description="(to - from) / |from| x 100")


class StatsOut(BaseModel):
    count: int
    first_ts: str
    last_ts: str
    first: float
    last: float
    min: float
    min_ts: str = Field(description="the first time the lowest value is reached")
    max: float
    max_ts: str = Field(description="the first time the highest value is reached")
    mean: float
    change: float | None = Field(default=None, exclude_if=absent, description="last - first")
    pct_change: float | None = Field(
        default=None, exclude_if=absent, description="change / |first| x 100; omitted when first is 0"
    )
    trend: str = Field(description="up, down, or flat: a change of at most 1% either way")
    largest_move: MoveOut | None = Field(
        default=None,
        exclude_if=absent,
        description="the two consecutive points of the largest relative move (none starts at 0); "
        "omitted without any move",
    )

    @classmethod
    def from_domain(cls, stats: timeseries.Stats | None) -> StatsOut | None:
        if stats is None:
            return None
        move = stats.largest_move
        return cls(
            count=stats.count,
            first_ts=rfc3339(stats.first_ts),
            last_ts=rfc3339(stats.last_ts),
            first=stats.first,
            last=stats.last,
            min=stats.min,
            min_ts=rfc3339(stats.min_ts),
            max=stats.max,
            max_ts=rfc3339(stats.max_ts),
            mean=stats.mean,
            change=stats.change,
            pct_change=stats.pct_change,
            trend=stats.trend,
            largest_move=MoveOut(
                start=rfc3339(move.start),
                end=rfc3339(move.end),
                from_value=move.from_value,
                to_value=move.to_value,
                pct=move.percent,
            )
            if move
            else None,
        )


class AnchorOut(BaseModel):
    type: str = Field(description="entity, edge (a fact) or artifact")
    id: int = Field(description="the entity's, fact's or artifact's id")
    role: str | None = Field(default=None, exclude_if=absent, description="omitted when none was given")
    window_start: str | None = Field(
        default=None, exclude_if=absent, description="RFC 3339; omitted without a window"
    )
    window_end: str | None = Field(
        default=None, exclude_if=absent, description="RFC 3339; omitted without a window"
    )
    window: str | None = Field(
        default=None,
        exclude_if=absent,
        description="the window as the gligabao server writes it in its answers: start/end; omitted without one",
    )
    label: str | None = Field(
        default=None, exclude_if=absent, description="the entity's name; a fact's source -relation-> target"
    )

    @classmethod
    def from_domain(cls, anchor: timeseries.StoredAnchor) -> AnchorOut:
        start, end = rfc3339(anchor.window_start), rfc3339(anchor.window_end)
        return cls(
            type=anchor.type,
            id=anchor.id,
            role=anchor.role or None,
            window_start=start,
            window_end=end,
            window=f"{start}/{end}" if start and end else None,
            label=anchor.label,
        )


class SeriesOut(BaseModel):
    id: int = Field(description="gb_series row id")
    key: str
    field: str
    name: str = Field(description="as given; the key when none was")
    unit: str | None = Field(default=None, exclude_if=absent, description="omitted when none was given")
    frequency: str | None = Field(default=None, exclude_if=absent, description="omitted when none was given")
    source: str = Field(description="supplied (by a caller) or fetched (from a timeseries provider)")
    provider: str | None = Field(default=None, exclude_if=absent, description="a fetched series' provider")
    point_count: int = Field(description="points stored")
    first_ts: str | None = Field(description="RFC 3339: the first point's time")
    last_ts: str | None = Field(description="RFC 3339: the last point's time")
    stats: StatsOut | None = Field(description="of every stored point, computed when read")
    created_at: str
    updated_at: str = Field(description="RFC 3339: when points or anchors were last added")
    anchors: list[AnchorOut] = Field(description="what it is about, oldest first")

    @classmethod
    def fields_of(cls, series: timeseries.StoredSeries) -> dict[str, Any]:
        stats = series.stats
        return {
            "id": series.id,
            "key": series.key,
            "field": series.field,
            "name": series.title,
            "unit": series.unit or None,
            "frequency": series.frequency or None,
            "source": series.source,
            "provider": series.provider or None,
            "point_count": stats.count if stats else 0,
            "first_ts": rfc3339(stats.first_ts) if stats else None,
            "last_ts": rfc3339(stats.last_ts) if stats else None,
            "stats": StatsOut.from_domain(stats),
            "created_at": rfc3339(series.created_at),
            "updated_at": rfc3339(series.updated_at),
            "anchors": [AnchorOut.from_domain(anchor) for anchor in series.anchors],
        }

    @classmethod
    def from_domain(cls, series: timeseries.StoredSeries) -> SeriesOut:
        return cls(**cls.fields_of(series))


class StoredSeriesOut(SeriesOut):
    created: bool = Field(description="false: the dataset held the key, and the series took the new points")
    points: int = Field(description="the distinct times this request wrote")

    @classmethod
    def from_domain(cls, series: timeseries.StoredSeries) -> StoredSeriesOut:
        return cls(**cls.fields_of(series), created=bool(series.created), points=series.points_written or 0)


class AttachResponse(BaseModel):
    dataset: str
    series: list[StoredSeriesOut] = Field(description="as stored, in the order given")
    user_id: str

    @classmethod
    def from_domain(cls, user_id: str, attached: timeseries.AttachedSeries) -> AttachResponse:
        return cls(
            dataset=attached.dataset,
            series=[StoredSeriesOut.from_domain(series) for series in attached.series],
            user_id=user_id,
        )


class SeriesListOut(BaseModel):
    dataset: str
    series: list[SeriesOut] = Field(description="by id, without their points")
    next_cursor: str | None = Field(description="pass it as cursor for the next page; null on the last page")

    @classmethod
    def from_domain(cls, page: timeseries.SeriesPage) -> SeriesListOut:
        return cls(
            dataset=page.dataset,
            series=[SeriesOut.from_domain(series) for series in page.series],
            next_cursor=page.next_cursor,
        )


class EntitySeriesOut(SeriesListOut):
    entity_id: int

    @classmethod
    def from_domain(cls, page: timeseries.SeriesPage) -> EntitySeriesOut:
        return cls(
            entity_id=page.entity_id or 0,
            dataset=page.dataset,
            series=[SeriesOut.from_domain(series) for series in page.series],
            next_cursor=page.next_cursor,
        )


class SeriesPointsOut(SeriesOut):
    dataset: str
    points: list[tuple[str, float]] = Field(description="[time, value] pairs, earliest first")
    truncated: bool = Field(description="more points in the range than `limit`")
    window_stats: StatsOut | None = Field(
        default=None,
        exclude_if=absent,
        description="with from or to: the statistics of every point in the range (omitted when it holds none)",
    )

    @classmethod
    def from_domain(cls, found: timeseries.SeriesPoints) -> SeriesPointsOut:
        return cls(
            **cls.fields_of(found.series),
            dataset=found.dataset,
            points=[(rfc3339(point.at), point.value) for point in found.points],
            truncated=found.truncated,
            window_stats=StatsOut.from_domain(found.range_stats),
        )
