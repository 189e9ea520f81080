"""Timeseries providers: where remember's `timeseries.fetch` gets series from.

A provider is a source of series about entities (prices of a company, the weather of a city), with
a description a model reads to assign it to an entity (stage resolve_series) and the form of the
identifier it takes for one (a ticker). None is configured by default, so a
fetch is a 503 (as the gligabao server answers without one), before any model call and before
anything is stored. A deployment registers providers in code (`register`), each a small class
meeting the `SeriesProvider` protocol.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from gligabao.errors import BadRequest, NotConfigured

NO_PROVIDER = "timeseries fetch is not available: no timeseries provider is registered"
PROVIDER_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# A window's bound: a number of days, hours or minutes ("30d", "12h", "0").
_SPAN = re.compile(r"(\d{1,5})([dhm]?)")
_UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1), "": timedelta(days=1)}


@dataclass(frozen=True)
class FetchedSeries:
    """One series a provider returned: its key, name, unit and points (time, value)."""

    key: str
    name: str
    unit: str
    points: Sequence[tuple[datetime, float]]


class SeriesProvider(Protocol):
    name: str
    description: str  # what it holds and for which entities: the model that assigns it reads it
    query_format: str  # how it names an entity ("a stock ticker: AAPL"); "" for the entity's name

    def fetch(self, query: str, start: datetime, end: datetime) -> list[FetchedSeries]: ...


_PROVIDERS: dict[str, SeriesProvider] = {}


def register(provider: SeriesProvider) -> None:
    """Adds a provider under its name (a second one of the name replaces the first)."""
    if not PROVIDER_NAME.fullmatch(provider.name):
        raise ValueError(f"provider name {provider.name!r}: 1-64 letters, digits, '_', '-' or '.'")
    _PROVIDERS[provider.name] = provider


def unregister(name: str) -> None:
    _PROVIDERS.pop(name, None)


def providers_for(names: Sequence[str] | None) -> list[SeriesProvider]:
    """The providers a fetch asks for (all when `names` is None): NotConfigured (503) when none is
    registered, BadRequest naming one that is not."""
    if not _PROVIDERS:
        raise NotConfigured(NO_PROVIDER)
    if names is None:
        return list(_PROVIDERS.values())
    unknown = [name for name in names if name not in _PROVIDERS]
    if unknown:
        raise BadRequest(
            f"timeseries.fetch.providers: unknown provider {unknown[0]!r} (known: {', '.join(sorted(_PROVIDERS))})"
        )
    return [_PROVIDERS[name] for name in dict.fromkeys(names)]


def span(value: str, field: str) -> timedelta:
    """A window bound ("30d", "12h", "90m", "0"): BadRequest naming `field` otherwise."""
    match = _SPAN.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise BadRequest(f"{field}: a duration such as 30d, 12h, 90m or 0")
    return int(match.group(1)) * _UNIT[match.group(2)]
