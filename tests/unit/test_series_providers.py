"""Timeseries providers: none by default (a fetch is a 503), named ones checked, window bounds parsed."""

from datetime import timedelta

import pytest

from gligabao.errors import BadRequest, NotConfigured
from gligabao.memory import series_providers
from gligabao.memory.series_providers import NO_PROVIDER, providers_for, register, span, unregister


class Prices:
    name = "prices"
    description = "daily closing prices of listed companies"
    query_format = "a stock ticker"

    def fetch(self, query, start, end):
        return []


@pytest.fixture
def prices():
    register(Prices())
    yield
    unregister("prices")


def test_with_no_provider_a_fetch_is_a_503():
    assert series_providers._PROVIDERS == {}
    with pytest.raises(NotConfigured) as raised:
        providers_for(None)
    assert raised.value.status == 503 and raised.value.message == NO_PROVIDER


def test_a_fetch_takes_every_provider_or_the_named_ones(prices):
    assert [p.name for p in providers_for(None)] == ["prices"]
    assert [p.name for p in providers_for(["prices", "prices"])] == ["prices"]
    with pytest.raises(BadRequest, match="unknown provider 'weather' \\(known: prices\\)"):
        providers_for(["weather"])


def test_a_provider_name_is_checked():
    bad = Prices()
    bad.name = "no spaces"
    with pytest.raises(ValueError):
        register(bad)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("90m", timedelta(minutes=90)),
        ("0", timedelta(0)),
        ("7", timedelta(days=7)),
    ],
)
def test_window_bounds(text, expected):
    assert span(text, "timeseries.fetch.before") == expected


@pytest.mark.parametrize("text", ["", "-1d", "1w", "1.5d", "d", "999999d", None, 3])
def test_a_bad_window_bound_is_a_400_naming_its_field(text):
    with pytest.raises(BadRequest, match=r"timeseries\.fetch\.after: a duration"):
        span(text, "timeseries.fetch.after")
