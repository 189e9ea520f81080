"""Timeseries without a database: the statistics (memory/timeseries.py `stats_of`, as the database
computes them), the merge of a request's points, the rules of a request's series with the gligabao
server's words (api/timeseries_models.py), and the lines a query's prompt shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from gligabao.api.app import validation_message
from gligabao.api.timeseries_models import AttachRequest
from gligabao.errors import BadRequest
from gligabao.limits import Limits
from gligabao.memory.timeseries import (
    Anchor,
    ContextSeries,
    Point,
    SeriesInput,
    StoredAnchor,
    StoredSeries,
    checked_series,
    merged_points,
    render_series_lines,
    stats_of,
)


def day(n: int, hour: int = 0) -> datetime:
    return datetime(2025, 1, n, hour, tzinfo=UTC)


def series_of(*values: float) -> list[Point]:
    return [Point(day(n), value) for n, value in enumerate(values, 1)]


# --- statistics -------------------------------------------------------------------------------------


def test_the_statistics_of_the_gligabao_servers_example():
    stats = stats_of([Point(day(1), 10.5), Point(day(2), 11.0), Point(day(3), 9.0), Point(day(10), 12.0)])

    assert (stats.count, stats.first, stats.last, stats.min, stats.max, stats.mean) == (
        4,
        10.5,
        12,
        9,
        12,
        10.625,
    )
    assert (stats.min_ts, stats.max_ts, stats.first_ts, stats.last_ts) == (day(3), day(10), day(1), day(10))
    assert stats.change == 1.5 and stats.pct_change == pytest.approx(14.285714285714285)
    assert stats.trend == "up"
    move = stats.largest_move
    assert (move.start, move.end, move.from_value, move.to_value) == (day(3), day(10), 9, 12)
    assert move.percent == pytest.approx(33.333333333333336)


def test_a_change_within_one_percent_either_way_is_flat():
    assert stats_of(series_of(100, 101)).trend == "flat"
    assert stats_of(series_of(100, 99)).trend == "flat"
    assert stats_of(series_of(100, 101.5)).trend == "up"
    assert stats_of(series_of(-5, -2)).pct_change == 60  # relative to |first|


def test_from_zero_there_is_no_percent_and_the_trend_is_the_sign():
    stats = stats_of(series_of(0, 5))

    assert stats.pct_change is None and stats.trend == "up"
    assert stats.largest_move is None  # a move from 0 has no size


def test_the_extremes_are_reached_first_and_no_move_means_no_largest_move():
    stats = stats_of(series_of(7, 7, 7))

    assert (stats.min_ts, stats.max_ts) == (day(1), day(1))
    assert stats.largest_move is None and stats.trend == "flat" and stats.change == 0


def test_the_largest_move_of_equal_size_is_the_earliest():
    move = stats_of(series_of(1, 2, 4)).largest_move  # +100%, then +100%

    assert (move.start, move.end) == (day(1), day(2))


def test_a_change_that_overflows_is_left_out():
    stats = stats_of(series_of(1.7e308, -1.7e308))

    assert stats.change is None and stats.pct_change is None and stats.trend == "down"
    assert stats.mean == 0.0


def test_no_point_no_statistics():
    assert stats_of([]) is None


# --- a request's points ------------------------------------------------------------------------------


def test_of_points_at_one_instant_the_last_given_counts_whatever_its_offset():
    paris = timezone(timedelta(hours=1))
    points = [Point(day(2), 1), Point(day(1, 1).astimezone(paris), 2), Point(day(1, 1), 3)]

    assert merged_points(points) == [Point(day(1, 1), 3), Point(day(2), 1)]


# --- the rules of a request --------------------------------------------------------------------------


def one(**fields) -> SeriesInput:
    return SeriesInput(**{"key": "AAPL", "points": series_of(1), "anchors": [Anchor(entity_id=1)], **fields})


@pytest.mark.parametrize(
    ("series", "message"),
    [
        ([], "series is required"),
        ([one(key=" ")], "series[0]: key is required"),
        ([one(key="é" * 129)], "series[0]: key is longer than 256 bytes"),
        ([one(points=[])], "series[0]: points are required (at least one)"),
        (
            [one(points=[Point(datetime(2025, 1, 1), 1)])],
            "series[0]: points[0]: the time of a point needs an offset",
        ),
        (
            [one(points=[Point(day(1), float("inf"))])],
            "series[0]: points[0]: the value of a point must be a finite number",
        ),
        ([one(), one()], 'series[1]: key "AAPL" with field "value" is given twice'),
        ([one(anchors=[Anchor()])], "series[0]: anchors[0]: exactly one of artifact, artifact_id, entity"),
        ([one(anchors=[Anchor(entity_id=1, edge_id=2)])], "series[0]: anchors[0]: exactly one of"),
        (
            [one(anchors=[Anchor(entity_id=1, window=(day(2), day(1)))])],
            "series[0]: anchors[0]: window ends before it starts",
        ),
    ],
)
def test_a_bad_series_is_refused_naming_it(series, message):
    with pytest.raises(BadRequest) as refused:
        checked_series(series)

    assert refused.value.message.startswith(message)


def test_the_limits_are_named_when_passed():
    limits = Limits(max_series_per_request=2, max_points_per_series=3, max_anchors_per_series=1)

    for series, message in [
        (
            [one(key="a"), one(key="b"), one(key="c")],
            "series: at most 2 series per request (GB_MAX_SERIES_PER_REQUEST)",
        ),
        (
            [one(points=series_of(1, 2, 3, 4))],
            "series[0]: at most 3 points per series (GB_MAX_POINTS_PER_SERIES",
        ),
        (
            [one(anchors=[Anchor(entity_id=1), Anchor(entity_id=2)])],
            "series[0]: at most 1 anchors per series",
        ),
    ]:
        with pytest.raises(BadRequest) as refused:
            checked_series(series, limits)
        assert refused.value.message.startswith(message)
    checked_series([one(key="a"), one(key="b")], limits)


def test_one_key_with_two_fields_is_two_series():
    checked_series([one(field="close"), one(field="volume")])


P = [["2025-05-01T00:00:00Z", 10.5]]


@pytest.mark.parametrize(
    ("series", "message"),
    [
        (
            [{"key": "k", "points": [["yesterday", 1]]}],
            'series[0]: points[0]: the time "yesterday" of a point must be RFC 3339',
        ),
        (
            [{"key": "k", "points": [[1714521600, 1]]}],
            "series[0]: points[0]: the time of a point must be an RFC 3339 string",
        ),
        (
            [{"key": "k", "points": [["2025-05-01T00:00:00Z", "1.5"]]}],
            "series[0]: points[0]: the value of a point must be a number",
        ),
        (
            [{"key": "k", "points": [["2025-05-01T00:00:00Z", True]]}],
            "series[0]: points[0]: the value of a point must be a number",
        ),
        (
            [{"key": "k", "points": [["2025-05-01T00:00:00Z", None]]}],
            "series[0]: points[0]: the value of a point must be a number",
        ),
        (
            [{"key": "k", "points": [["2025-05-01T00:00:00Z", 1, 2]]}],
            "series[0]: points[0]: a point must be a pair [time, value]",
        ),
        (
            [{"key": "k", "points": [{"t": "2025-05-01T00:00:00Z", "v": 1}]}],
            "series[0]: points[0]: a point must be a pair",
        ),
        ([{"key": "k"}], "series[0]: points are required (at least one)"),
        ([{"points": P}], "series[0]: key is required"),
        ([{"key": "a\nb", "points": P}], "series[0]: key must be one line"),
        ([{"key": "k", "points": P, "definition": "d"}], "series[0]: definition: unknown field"),
        ([{"key": "k", "points": P, "anchors": [{"foo": 1}]}], "series[0]: anchors[0]: foo: unknown field"),
        (
            [{"key": "k", "points": P, "anchors": [{"artifact": False}]}],
            "series[0]: anchors[0]: exactly one of",
        ),
        (
            [{"key": "k", "points": P, "anchors": [{"entity": {"type": "person"}}]}],
            "series[0]: anchors[0]: entity.name is required",
        ),
        (
            [{"key": "k", "points": P, "anchors": [{"edge": {"source": "A", "target": "B"}}]}],
            "series[0]: anchors[0]: edge.relation is required",
        ),
        (
            [{"key": "k", "points": P, "anchors": [{"artifact_id": 1, "window": [P[0][0]]}]}],
            "series[0]: anchors[0]: window must be [start, end]",
        ),
        (
            [{"key": "k", "points": P, "anchors": [{"artifact_id": 1, "window": ["x", "y"]}]}],
            "series[0]: anchors[0]: window must be two RFC 3339 times",
        ),
        (
            [{"key": "k", "points": P, "anchors": [{"entity_id": "1"}]}],
            "series[0]: anchors[0]: entity_id: Input should be a valid integer",
        ),
        (
            [{"key": "D", "points": P}, {"key": "D", "points": P}],
            'series[1]: key "D" with field "value" is given twice',
        ),
        ([], "series is required"),
    ],
)
def test_the_body_of_post_timeseries_is_refused_in_the_gligabao_servers_words(series, message):
    with pytest.raises(ValidationError) as refused:
        AttachRequest.model_validate({"user_id": "u1", "series": series})

    errors = [{**error, "loc": ("body", *error["loc"])} for error in refused.value.errors()]
    assert validation_message(errors).startswith(message)


def test_the_gligabao_servers_fields_are_taken():
    request = AttachRequest.model_validate(
        {
            "user_id": "u1",
            "series": [
                {
                    "key": "ACME",
                    "field": "close",
                    "frequency": "daily",
                    "points": P,
                    "anchors": [{"entity": {"name": "Acme"}, "role": "price", "window": [P[0][0], P[0][0]]}],
                }
            ],
        }
    )

    [series] = request.domain()
    assert (series.key, series.field, series.frequency, series.source) == (
        "ACME",
        "close",
        "daily",
        "supplied",
    )
    assert series.anchors[0].role == "price" and series.anchors[0].entity.name == "Acme"
    assert series.points == (Point(datetime(2025, 5, 1, tzinfo=UTC), 10.5),)


# --- the prompt's lines ------------------------------------------------------------------------------


def stored(**fields) -> StoredSeries:
    points = [Point(day(n), 220.0 + n) for n in range(1, 31)]
    points[2] = Point(day(3), 220.0)
    defaults = dict(
        id=3,
        key="AAPL.close",
        field="value",
        name="",
        unit="USD",
        frequency="",
        source="supplied",
        provider="",
        created_at=day(1),
        updated_at=day(30),
        stats=stats_of(points),
        anchors=(StoredAnchor("entity", 12, label="Apple"),),
    )
    return StoredSeries(**{**defaults, **fields})


def test_a_series_line_tells_its_span_extremes_mean_and_latest_points():
    latest = (Point(day(28), 248.0), Point(day(29), 249.0), Point(day(30), 250.0))

    [line] = render_series_lines([ContextSeries(stored(), latest)])

    assert line == (
        "[series 3] AAPL.close (USD) of Apple(12): 30 points 2025-01-01..2025-01-30; last 250.0 (2025-01-30); "
        "min 220.0 (2025-01-03); max 250.0 (2025-01-30); mean 235.4; latest: 2025-01-28 248.0, "
        "2025-01-29 249.0, 2025-01-30 250.0"
    )


def test_a_line_names_the_field_the_name_facts_roles_and_windows_and_never_breaks():
    series = stored(
        key="AAPL",
        field="close",
        name="Apple\nclosing price",
        anchors=(
            StoredAnchor("edge", 7, label="Tim -works_at-> Apple"),
            StoredAnchor("artifact", 5, role="source", window_start=day(1), window_end=day(2, 9)),
        ),
    )

    [line] = render_series_lines([ContextSeries(series)])

    assert line.startswith(
        '[series 3] AAPL/close "Apple closing price" (USD) of Tim -works_at-> Apple (fact 7), artifact 5 as source '
        "over 2025-01-01..2025-01-02T09:00:00Z: 30 points"
    )
    assert "\n" not in line and "latest" not in line
