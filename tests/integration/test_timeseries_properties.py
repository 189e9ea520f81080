"""Timeseries against a model of the rule, and held to their user.

A random sequence of attaches of one series (points at overlapping times, the same instant written
at other offsets, any finite value, extremes and -0.0 included) through the real statements
(memory/timeseries.py, db/series.py): after each one the stored points are the model's (the last
value written at a time wins, within a request too) and the statistics read back are the model's
(memory/timeseries.py `stats_of`, exact in Python; the mean within the values' rounding). And another user's transaction sees no row of
the series, nor can it anchor one to the first user's rows."""

from __future__ import annotations

import itertools
import math
import os
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction

import psycopg
import pytest
from graph_rows import add_dataset, add_entity
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gligabao import bootstrap
from gligabao.errors import BadRequest
from gligabao.memory import timeseries
from gligabao.memory.timeseries import Anchor, Point, SeriesInput

EXAMPLES = {"ci": 25, "long": 300}[os.environ.get("HYPOTHESIS_PROFILE", "ci")]
START = datetime(2025, 1, 1, tzinfo=UTC)
OFFSETS = [UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30))]
_datasets = itertools.count(1)

values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, 1.7976931348623157e308, -1.7976931348623157e308]),
    st.integers(-1000, 1000).map(float),
)
# A few instants (so that attaches overlap), each written at any of three offsets.
instants = st.builds(
    lambda hour, offset: (START + timedelta(hours=hour)).astimezone(offset),
    st.integers(0, 24),
    st.sampled_from(OFFSETS),
)
attaches = st.lists(st.lists(st.tuples(instants, values), min_size=1, max_size=12), min_size=1, max_size=5)


def model_after(steps: list[list[tuple[datetime, float]]]) -> list[Point]:
    held: dict[datetime, float] = {}
    for step in steps:
        for at, value in step:
            held[at] = value
    return [Point(at, value) for at, value in sorted(held.items())]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=attaches)
def test_stored_points_and_statistics_are_the_models_after_any_sequence_of_attaches(db, steps):
    memory = bootstrap.bundle()
    dataset = f"d{next(_datasets)}"
    entity = add_entity(db, add_dataset(db, "u1", dataset), "Acme", "organization")
    done: list[list[tuple[datetime, float]]] = []

    for step in steps:
        series = SeriesInput(
            key="ACME",
            field="close",
            points=[Point(at, value) for at, value in step],
            anchors=[Anchor(entity_id=entity)],
        )
        [stored] = timeseries.attach(memory, "u1", dataset, [series]).series
        done.append(step)
        expected = model_after(done)

        read = timeseries.read_series(memory, "u1", stored.id, limit=timeseries.POINTS_MAX)
        assert [(p.at, p.value) for p in read.points] == [(p.at, p.value) for p in expected]
        assert stored.created == (len(done) == 1)
        assert stored.points_written == len({at for at, _ in step})
        assert_same_stats(read.series.stats, timeseries.stats_of(expected))
        assert_same_stats(stored.stats, timeseries.stats_of(expected))


def assert_same_stats(found: timeseries.Stats | None, model: timeseries.Stats | None) -> None:
    assert found is not None and model is not None
    exact = ("count", "first_ts", "first", "last_ts", "last", "min", "min_ts", "max", "max_ts")
    assert {name: getattr(found, name) for name in exact} == {name: getattr(model, name) for name in exact}
    # The database sums each value's shortest decimal (exact to half a unit in its last place), so
    # the mean of values that nearly cancel is close to the exact one by the values' own magnitude.
    magnitude = max(abs(model.min), abs(model.max))
    assert math.isclose(found.mean, model.mean, rel_tol=1e-12, abs_tol=max(1e-15 * magnitude, 5e-324))
    assert found.trend == model.trend
    # The largest move: the same as the model's, or one as large to 16 significant digits (the
    # database compares the moves so: an earlier one wins a tie).
    if model.largest_move is None:
        assert found.largest_move is None
    else:
        assert found.largest_move is not None
        largest, move = relative_size(model.largest_move), relative_size(found.largest_move)
        assert move == largest or abs(move - largest) <= Fraction(1, 10**15) * largest


def relative_size(move: timeseries.Move) -> Fraction:
    return abs((Fraction(move.to_value) - Fraction(move.from_value)) / Fraction(move.from_value))


# --- row-level security -------------------------------------------------------------------------------


def test_another_users_transaction_sees_no_series_row_and_cannot_anchor_to_mine(db, database_url):
    memory = bootstrap.bundle()
    mine = add_dataset(db, "u1")
    acme = add_entity(db, mine, "Acme", "organization")
    add_dataset(db, "u2")
    [stored] = timeseries.attach(
        memory, "u1", "main", [SeriesInput("ACME", [Point(START, 1.0)], anchors=[Anchor(entity_id=acme)])]
    ).series

    with psycopg.connect(database_url) as conn, conn.transaction():
        conn.execute("SELECT set_config('gligabao.user_id', 'u2', true)")
        seen = {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("gb_series", "gb_series_points", "gb_series_anchors")
        }
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO gb_series (dataset_id, key) VALUES (%s, 'planted')", [mine])

    assert seen == {"gb_series": 0, "gb_series_points": 0, "gb_series_anchors": 0}
    with pytest.raises(BadRequest, match=f"series anchor not found: entity {acme}"):
        timeseries.attach(
            memory, "u2", "main", [SeriesInput("ACME", [Point(START, 9.0)], anchors=[Anchor(entity_id=acme)])]
        )
    assert db.execute("SELECT count(*) FROM gb_series").fetchone()[0] == 1
    with pytest.raises(timeseries.NotFound):
        timeseries.read_series(memory, "u2", stored.id)
