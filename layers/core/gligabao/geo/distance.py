"""Great-circle distances and the bounding box that prefilters a radius search (SPEC section 9).

Distances are haversine on a sphere of the Earth's mean radius (R = 6371.0088 km, IUGG). The
box of a circle is the smallest latitude/longitude rectangle holding it (J. P. Matuschek's
method): across the date line it is two longitude ranges, and when the circle holds a pole it
spans every longitude.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

EARTH_RADIUS_KM = 6371.0088

# Widens a box by a hair, so a point exactly on the circle is never lost to rounding.
BOX_MARGIN_DEGREES = 1e-9


def haversine_km(latitude1: float, longitude1: float, latitude2: float, longitude2: float) -> float:
    """The great-circle distance between two points given in degrees."""
    phi1, phi2 = math.radians(latitude1), math.radians(latitude2)
    half_dphi = (phi2 - phi1) / 2
    half_dlambda = math.radians(longitude2 - longitude1) / 2
    a = math.sin(half_dphi) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(half_dlambda) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(min(1.0, a)))


@dataclass(frozen=True)
class Box:
    """Latitude bounds and one or two longitude ranges, in degrees, all inclusive."""

    latitude_min: float
    latitude_max: float
    longitude_ranges: tuple[tuple[float, float], ...]


def bounding_box(latitude: float, longitude: float, radius_km: float) -> Box:
    """Every point within `radius_km` of (latitude, longitude) lies in this box."""
    angle = radius_km / EARTH_RADIUS_KM
    phi, lam = math.radians(latitude), math.radians(longitude)
    phi_min, phi_max = phi - angle, phi + angle
    margin = BOX_MARGIN_DEGREES
    if phi_min <= -math.pi / 2 or phi_max >= math.pi / 2:  # a pole is inside: every longitude
        return Box(
            max(math.degrees(phi_min), -90.0) - margin,
            min(math.degrees(phi_max), 90.0) + margin,
            ((-180.0, 180.0),),
        )
    dlam = math.asin(min(1.0, math.sin(angle) / math.cos(phi)))
    lam_min, lam_max = math.degrees(lam - dlam) - margin, math.degrees(lam + dlam) + margin
    if lam_max - lam_min >= 360.0:
        ranges: tuple[tuple[float, float], ...] = ((-180.0, 180.0),)
    elif lam_min < -180.0:  # across the date line, westwards
        ranges = ((lam_min + 360.0, 180.0), (-180.0, lam_max))
    elif lam_max > 180.0:  # across the date line, eastwards
        ranges = ((lam_min, 180.0), (-180.0, lam_max - 360.0))
    else:
        ranges = ((lam_min, lam_max),)
    return Box(math.degrees(phi_min) - margin, math.degrees(phi_max) + margin, ranges)
