"""The bi-temporal rules of remember (SPEC section 5), function by function: the times a model
gives and the period of a new fact (the rule between facts: test_fact_history_rule.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gligabao.memory.temporal import (
    fact_period,
    parse_fact_time,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023-01-01T00:00:00Z", datetime(2023, 1, 1, tzinfo=UTC)),
        ("2023-01-01T02:00:00+02:00", datetime(2023, 1, 1, tzinfo=UTC)),
        ("2023-01-01T00:00:00", datetime(2023, 1, 1, tzinfo=UTC)),
        ("2023-01-01", datetime(2023, 1, 1, tzinfo=UTC)),
        (None, None),
        ("", None),
        ("null", None),
        ("sometime in spring", None),
    ],
)
def test_fact_times_are_read_tolerantly_as_utc(text, expected):
    assert parse_fact_time(text) == expected


def test_fact_period_rules():
    reference = datetime(2025, 1, 31, tzinfo=UTC)
    start, end = datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC)

    assert fact_period(None, None, reference) == (reference, None)
    assert fact_period(start, None, reference) == (start, None)
    assert fact_period(start, end, reference) == (start, end)
    assert fact_period(end, start, reference) == (end, None)  # an end before the start is a misreading
    assert fact_period(None, end, reference) == (None, end)  # ended before the text: start unknown
    later = datetime(2026, 1, 1, tzinfo=UTC)
    assert fact_period(None, later, reference) == (reference, later)  # will end: holds from the text on


@pytest.mark.parametrize(
    "text",
    [
        "unknown",
        "None",
        "NULL",
        "  ",
        "2023-13-01",
        "2023-02-30",
        "last year",
        "2023/01/01",
        "0000-01-01T00:00:00Z",  # year 0
        "99999-01-01T00:00:00Z",
        "0001-01-01T00:00:00+01:00",  # year 0 in UTC
        "9999-12-31T23:00:00-05:00",  # year 10000 in UTC
    ],
)
def test_a_time_a_model_could_not_give_is_no_time(text):
    assert parse_fact_time(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (" 2023-01-01 ", datetime(2023, 1, 1, tzinfo=UTC)),
        ("2023-01-01T00:00:00z", datetime(2023, 1, 1, tzinfo=UTC)),
        ("2023-06-15T18:30:00-05:00", datetime(2023, 6, 15, 23, 30, tzinfo=UTC)),
    ],
)
def test_a_time_is_trimmed_and_any_offset_turned_into_utc(text, expected):
    parsed = parse_fact_time(text)

    assert parsed == expected
    assert parsed.utcoffset() == timedelta(0)


def test_fact_period_bounds():
    reference = datetime(2025, 1, 31, tzinfo=UTC)
    start = datetime(2023, 1, 1, tzinfo=UTC)

    # a fact that ends when it starts keeps its end
    assert fact_period(start, start, reference) == (start, start)
    # a fact with no start that ended at the very reference time: ended, start unknown
    assert fact_period(None, reference, reference) == (None, reference)
