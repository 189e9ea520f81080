"""The bi-temporal rules of remember (SPEC section 5), function by function: the times a model
gives, the period of a new fact, restatements and superseded facts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gligabao.memory.temporal import fact_period, parse_fact_time


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
