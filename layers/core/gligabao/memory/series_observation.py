"""Observations of timeseries (remember's `timeseries.observations`): for each series a remember
stored, a short text written from its statistics, which remember then extracts into the graph
like any text (an artifact of kind `series_observation`), so that "how did Acme's share price
move in March?" finds facts as well as the series.

The text is written here, without a model call: the extraction that follows is the only one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Point:
    at: datetime
    value: float


@dataclass(frozen=True)
class ObservedSeries:
    """What an observation says of a series: its names, what it is about (the names of its
    anchors' entities or facts) and its points in time order."""

    key: str
    name: str
    unit: str
    about: Sequence[str]
    points: Sequence[Point]


def observation_text(series: ObservedSeries) -> str | None:
    """The observation's text, or None when the series has no point (nothing to observe). As the
    gligabao server does, a change within 1% either way is flat."""
    points = sorted(series.points, key=lambda point: point.at)
    if not points:
        return None
    title = series.name or series.key
    subject = f"the timeseries {title} (key {series.key}{f', unit {series.unit}' if series.unit else ''})"
    if series.about:
        subject += f" about {', '.join(series.about)}"
    unit = f" {series.unit}" if series.unit else ""
    first, last = points[0], points[-1]
    if len(points) == 1:
        return f"Observation of {subject}: on {_day(first.at)} its value was {_number(first.value)}{unit}."
    highest = max(points, key=lambda point: point.value)
    lowest = min(points, key=lambda point: point.value)
    mean = math.fsum(point.value for point in points) / len(points)
    sentences = [
        f"Observation of {subject}: {len(points)} values from {_day(first.at)} to {_day(last.at)}.",
        f"It {_movement(first.value, last.value)}, from {_number(first.value)}{unit} on {_day(first.at)}"
        f" to {_number(last.value)}{unit} on {_day(last.at)}{_change(first.value, last.value)}.",
        f"The highest value was {_number(highest.value)}{unit} on {_day(highest.at)},"
        f" the lowest {_number(lowest.value)}{unit} on {_day(lowest.at)},"
        f" and the mean {_number(mean)}{unit}.",
    ]
    move = largest_move(points)
    if move is not None:
        before, after, percent = move
        sentences.append(
            f"Its biggest step between two readings was {percent:+.2f}%, from {_number(before.value)}{unit}"
            f" on {_day(before.at)} to {_number(after.value)}{unit} on {_day(after.at)}."
        )
    return " ".join(sentences)


def percent_change(start: float, end: float) -> float | None:
    """The change from `start` to `end` in percent of |start|; None from 0 (no ratio)."""
    return None if start == 0 else (end - start) / abs(start) * 100


def trend(start: float, end: float) -> str:
    """up, down or flat: flat within 1% either way (or no change at all from 0)."""
    percent = percent_change(start, end)
    change = end - start if percent is None else percent
    if (percent is not None and abs(percent) <= 1) or change == 0:
        return "flat"
    return "up" if change > 0 else "down"


def largest_move(points: Sequence[Point]) -> tuple[Point, Point, float] | None:
    """The consecutive pair of points (in time order) with the largest change in percent, and that
    change; None when no pair has one (a pair from 0 has none) or every change is 0."""
    best: tuple[Point, Point, float] | None = None
    for before, after in itertools.pairwise(points):
        percent = percent_change(before.value, after.value)
        if percent is not None and percent != 0 and (best is None or abs(percent) > abs(best[2])):
            best = (before, after, percent)
    return best


def _movement(start: float, end: float) -> str:
    return {"up": "rose", "down": "fell", "flat": "held steady"}[trend(start, end)]


def _change(start: float, end: float) -> str:
    """The relative change in percent, when it means something (a start of 0 has none)."""
    percent = percent_change(start, end)
    return "" if percent is None or start == end else f" ({percent:+.2f}%)"


def _number(value: float) -> str:
    """A value as a person writes it: no trailing zeros, at most 4 decimals."""
    text = f"{value:,.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _day(moment: datetime) -> str:
    """The date, with the time of day when it is not midnight UTC."""
    if (moment.hour, moment.minute, moment.second) == (0, 0, 0):
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%d %H:%M UTC")
