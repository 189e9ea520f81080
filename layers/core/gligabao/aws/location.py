"""The `aws-location` geo resolver: Amazon Location Service's place index (GB_PLACE_INDEX),
`SearchPlaceIndexForText` through boto3, the best result of each name.

A name the index does not know is left out; the service failing (throttled, denied, a missing
index, no network) is a 502 naming the service, never the credentials.
"""

from __future__ import annotations

from collections.abc import Iterable

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from gligabao.errors import NotConfigured, ProviderError
from gligabao.model import Place

# Amazon Location answers in tens of milliseconds; a place is not worth a long wait.
LOCATION_TIMEOUT_S = 5
LOCATION_MAX_ATTEMPTS = 2
# SearchPlaceIndexForText's own limit on the text.
LOCATION_TEXT_MAX_CHARS = 200


class AwsLocationResolver:
    def __init__(self, place_index: str | None, client=None):
        if not place_index:
            raise NotConfigured(
                "geo resolver aws-location needs GB_PLACE_INDEX (an Amazon Location place index)"
            )
        self.place_index = place_index
        self._client = client

    def __repr__(self) -> str:
        return f"AwsLocationResolver(place_index={self.place_index!r})"

    @property
    def client(self):
        if self._client is None:
            self._client = boto3.client(
                "location",
                config=Config(
                    connect_timeout=LOCATION_TIMEOUT_S,
                    read_timeout=LOCATION_TIMEOUT_S,
                    retries={"max_attempts": LOCATION_MAX_ATTEMPTS, "mode": "standard"},
                ),
            )
        return self._client

    def resolve(self, names: Iterable[str]) -> dict[str, Place]:
        found = {}
        for name in dict.fromkeys(names):
            text = name.strip()[:LOCATION_TEXT_MAX_CHARS]
            if not text:
                continue
            try:
                reply = self.client.search_place_index_for_text(
                    IndexName=self.place_index, Text=text, MaxResults=1
                )
            except ClientError as error:
                code = error.response.get("Error", {}).get("Code", "error")
                raise ProviderError(f"Amazon Location Service failed ({code})") from None
            except BotoCoreError as error:
                raise ProviderError(f"Amazon Location Service failed ({type(error).__name__})") from None
            place = _place(reply.get("Results") or [])
            if place is not None:
                found[name] = place
        return found


def _place(results: list[dict]) -> Place | None:
    if not results:
        return None
    place = results[0].get("Place") or {}
    point = (place.get("Geometry") or {}).get("Point") or []
    if len(point) != 2:
        return None
    longitude, latitude = float(point[0]), float(point[1])  # GeoJSON order
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        return None
    categories = place.get("Categories") or []
    kind = _KINDS.get((categories[0] if categories else "").lower(), "place")
    label = place.get("Label") or ""
    return Place(label.split(",")[0].strip(), latitude, longitude, kind, place.get("Country") or "")


# Amazon Location's categories of places, as entity types.
_KINDS = {
    "municipalitytype": "city",
    "countrytype": "country",
    "regiontype": "region",
    "subregiontype": "region",
    "neighborhoodtype": "place",
    "pointaddress": "address",
    "streettype": "address",
    "postalcodetype": "place",
    "pointofinteresttype": "place",
}
