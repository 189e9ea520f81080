"""Great-circle distances (haversine, R = 6371.0088 km) and the bounding box of a radius search,
at the date line and the poles too."""

from __future__ import annotations

import math
import random

import pytest

from gligabao.geo.distance import EARTH_RADIUS_KM, Box, bounding_box, haversine_km

PARIS = (48.8566, 2.3522)
LONDON = (51.5074, -0.1278)
SUVA = (-18.1416, 178.4419)  # Fiji, west of the date line
TAVEUNI_EAST = (-16.85, -179.95)  # just east of the date line


def inside(box: Box, latitude: float, longitude: float) -> bool:
    return box.latitude_min <= latitude <= box.latitude_max and any(
        low <= longitude <= high for low, high in box.longitude_ranges
    )


def test_paris_to_london_is_about_344_km():
    assert haversine_km(*PARIS, *LONDON) == pytest.approx(343.6, abs=0.5)


def test_the_distance_is_symmetric_and_zero_to_itself():
    assert haversine_km(*PARIS, *LONDON) == pytest.approx(haversine_km(*LONDON, *PARIS))
    assert haversine_km(*PARIS, *PARIS) == 0


def test_antipodes_are_half_the_circumference_apart():
    assert haversine_km(0, 0, 0, 180) == pytest.approx(math.pi * EARTH_RADIUS_KM)
    assert haversine_km(90, 0, -90, 0) == pytest.approx(20015.1, abs=0.1)


def test_a_distance_across_the_date_line_is_the_short_way_round():
    assert haversine_km(0, 179.5, 0, -179.5) == pytest.approx(111.2, abs=0.1)
    assert haversine_km(*SUVA, *TAVEUNI_EAST) < 300


def test_a_box_across_the_date_line_has_two_longitude_ranges():
    box = bounding_box(*SUVA, 300)

    assert len(box.longitude_ranges) == 2
    assert inside(box, *TAVEUNI_EAST)
    assert not inside(box, SUVA[0], 0.0)


def test_a_box_holding_a_pole_spans_every_longitude():
    box = bounding_box(89.5, 10.0, 100)

    assert box.longitude_ranges == ((-180.0, 180.0),)
    assert box.latitude_max >= 90
    assert inside(box, 89.8, -170.0)  # over the pole: 100 km away at most
    assert haversine_km(89.5, 10.0, 89.8, -170.0) < 100


def test_a_box_away_from_the_date_line_and_the_poles_is_one_range():
    box = bounding_box(*PARIS, 50)

    assert len(box.longitude_ranges) == 1
    assert inside(box, *PARIS) and not inside(box, *LONDON)


def destination(latitude: float, longitude: float, bearing_deg: float, distance_km: float):
    """The point `distance_km` away along the great circle of `bearing_deg` (spherical formulas)."""
    phi, lam, theta = math.radians(latitude), math.radians(longitude), math.radians(bearing_deg)
    delta = distance_km / EARTH_RADIUS_KM
    phi2 = math.asin(math.sin(phi) * math.cos(delta) + math.cos(phi) * math.sin(delta) * math.cos(theta))
    lam2 = lam + math.atan2(
        math.sin(theta) * math.sin(delta) * math.cos(phi), math.cos(delta) - math.sin(phi) * math.sin(phi2)
    )
    return math.degrees(phi2), (math.degrees(lam2) + 540) % 360 - 180


@pytest.mark.parametrize(
    "center",
    [PARIS, SUVA, (0.0, 180.0), (0.0, -180.0), (-89.9, 0.0), (89.0, 179.9), (-60.0, -179.0), (70.0, 0.0)],
)
@pytest.mark.parametrize("radius_km", [1, 50, 500, 3000, 20015])
def test_every_point_within_the_radius_is_inside_its_box(center, radius_km):
    """The box is only a prefilter: it may hold more, never less (points on the circle included)."""
    rng = random.Random(f"{center}{radius_km}")
    box = bounding_box(*center, radius_km)
    for step in range(2000):
        distance = radius_km if step % 4 == 0 else rng.uniform(0, radius_km)
        latitude, longitude = destination(*center, rng.uniform(0, 360), distance)
        assert haversine_km(*center, latitude, longitude) == pytest.approx(distance, abs=1e-6)
        assert inside(box, latitude, longitude), (latitude, longitude, distance)
