"""Observations of timeseries (remember's `timeseries.observations`): for each series a remember
stored, a short text written from its statistics (memory/timeseries.py, `stats_of`), which
remember then extracts into the graph like any text (an artifact of kind `series_observation`),
so that "how did Acme's share price move in March?" finds facts as well as the series.

The text is written here, without a model call: the extraction that follows is the only one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gligabao.memory.timeseries import Point, stats_of
from gligabao.timefmt import day_or_instant


@dataclass(frozen=True)
class ObservedSeries:
    """What an observation says of a series: its names, what it is about (the names of its
    anchors' entities or facts) and its points."""

    key: str
    name: str
    unit: str
    about: Sequence[str]
    points: Sequence[Point]


# How an observation says a series' trend (stats_of: flat within 1% either way, as the gligabao server).
_MOVEMENT = {"up": "rose", "down": "fell", "flat": "held steady"}


def observation_text(series: ObservedSeries) -> str | None:
    """The observation's text, or None when the series has no point (nothing to observe)."""
    stats = stats_of(series.points)
    if stats is None:
        return None
    title = series.name or series.key
    subject = f"the timeseries {title} (key {series.key}{f', unit {series.unit}' if series.unit else ''})"
    if series.about:
        subject += f" about {', '.join(series.about)}"
    unit = f" {series.unit}" if series.unit else ""
    first = f"{_number(stats.first)}{unit} on {_day(stats.first_ts)}"
    if stats.count == 1:
        return (
            f"Observation of {subject}: on {_day(stats.first_ts)} its value was {_number(stats.first)}{unit}."
        )
    change = "" if stats.pct_change is None or stats.change == 0 else f" ({stats.pct_change:+.2f}%)"
    sentences = [
        f"Observation of {subject}: {stats.count} values from {_day(stats.first_ts)} to {_day(stats.last_ts)}.",
        f"It {_MOVEMENT[stats.trend]}, from {first} to {_number(stats.last)}{unit} on {_day(stats.last_ts)}{change}.",
        f"The highest value was {_number(stats.max)}{unit} on {_day(stats.max_ts)},"
        f" the lowest {_number(stats.min)}{unit} on {_day(stats.min_ts)},"
        f" and the mean {_number(stats.mean)}{unit}.",
    ]
    move = stats.largest_move
    if move is not None and move.percent is not None:
        sentences.append(
            f"Its biggest step between two readings was {move.percent:+.2f}%, from {_number(move.from_value)}{unit}"
            f" on {_day(move.start)} to {_number(move.to_value)}{unit} on {_day(move.end)}."
        )
    return " ".join(sentences)


def _number(value: float) -> str:
    """A value as a person writes it: no trailing zeros, at most 4 decimals."""
    text = f"{value:,.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _day(moment) -> str:
    return day_or_instant(moment) or ""
