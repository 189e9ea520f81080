"""The observation of a timeseries: a text written from its points, without a model call."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from gligabao.memory.series_observation import ObservedSeries, observation_text
from gligabao.memory.timeseries import Point


def day(n: int) -> datetime:
    return datetime(2025, 3, 1, tzinfo=UTC) + timedelta(days=n - 1)


def series(values: list[float], about=("Acme",), unit="USD") -> ObservedSeries:
    return ObservedSeries(
        "ACME.close", "Acme close", unit, about, [Point(day(i + 1), v) for i, v in enumerate(values)]
    )


def test_an_observation_states_the_movement_the_extremes_and_the_mean():
    text = observation_text(series([10.0, 14.0, 9.0, 12.5]))
    assert text == (
        "Observation of the timeseries Acme close (key ACME.close, unit USD) about Acme: 4 values from"
        " 2025-03-01 to 2025-03-04. It rose, from 10 USD on 2025-03-01 to 12.5 USD on 2025-03-04 (+25.00%)."
        " The highest value was 14 USD on 2025-03-02, the lowest 9 USD on 2025-03-03, and the mean 11.375 USD."
        " Its biggest step between two readings was +40.00%, from 10 USD on 2025-03-01 to 14 USD on 2025-03-02."
    )


def test_a_fall_a_flat_line_and_a_start_at_zero_are_said_as_they_are():
    assert "It fell, from 4" in observation_text(series([4.0, 3.0]))
    assert "(-25.00%)" in observation_text(series([4.0, 3.0]))
    assert "It held steady, from 2 USD" in observation_text(series([2.0, 5.0, 2.0]))
    assert "It held steady, from 100 USD" in observation_text(series([100.0, 101.0]))  # within 1%
    assert "It rose, from 100 USD" in observation_text(series([100.0, 101.5]))
    assert "%" not in observation_text(series([0.0, 5.0]))  # no ratio from 0, no step from 0
    assert "biggest step" not in observation_text(series([7.0, 7.0, 7.0]))


def test_one_point_and_no_point():
    assert observation_text(series([7.25], about=(), unit="")) == (
        "Observation of the timeseries Acme close (key ACME.close): on 2025-03-01 its value was 7.25."
    )
    assert observation_text(series([])) is None


def test_points_are_read_in_time_order_whatever_order_they_come_in():
    ordered = series([1.0, 2.0, 3.0])
    shuffled = ObservedSeries(
        ordered.key, ordered.name, ordered.unit, ordered.about, list(reversed(ordered.points))
    )
    assert observation_text(shuffled) == observation_text(ordered)


@given(st.lists(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False), min_size=2, max_size=40))
def test_the_extremes_named_are_the_series_extremes(values):
    text = observation_text(series(values))
    assert text is not None
    highest = max(range(len(values)), key=lambda i: (values[i], -i))
    lowest = min(range(len(values)), key=lambda i: (values[i], i))
    assert f"on {day(highest + 1):%Y-%m-%d}, the lowest" in text
    assert f"on {day(lowest + 1):%Y-%m-%d}, and the mean" in text
