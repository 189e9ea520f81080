"""The `aws-location` resolver: Amazon Location Service's SearchPlaceIndexForText through boto3,
tested with botocore's Stubber (moto does not mock Amazon Location)."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from gligabao.aws.location import AwsLocationResolver
from gligabao.bootstrap import Bundle
from gligabao.errors import NotConfigured, ProviderError
from gligabao.settings import Settings


@pytest.fixture
def client():
    return boto3.client(
        "location", region_name="eu-west-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )


def result(label: str, longitude: float, latitude: float, category: str = "MunicipalityType", country="FRA"):
    return {
        "Place": {
            "Label": label,
            "Geometry": {"Point": [longitude, latitude]},
            "Country": country,
            "Categories": [category],
        },
        "Relevance": 0.98,
    }


def summary(text: str) -> dict:
    return {"Text": text, "DataSource": "Esri"}


def test_a_name_resolves_to_the_best_result_point_longitude_first(client):
    resolver = AwsLocationResolver("gb-places", client=client)
    with Stubber(client) as stub:
        stub.add_response(
            "search_place_index_for_text",
            {"Summary": summary("Paris"), "Results": [result("Paris, Île-de-France, FRA", 2.3522, 48.8566)]},
            {"IndexName": "gb-places", "Text": "Paris", "MaxResults": 1},
        )
        found = resolver.resolve(["Paris"])
        stub.assert_no_pending_responses()

    paris = found["Paris"]
    assert (paris.name, paris.latitude, paris.longitude, paris.kind, paris.country_code) == (
        "Paris",
        48.8566,
        2.3522,
        "city",
        "FRA",
    )


def test_a_name_the_index_does_not_know_is_left_out_and_each_name_is_asked_once(client):
    resolver = AwsLocationResolver("gb-places", client=client)
    with Stubber(client) as stub:
        stub.add_response(
            "search_place_index_for_text",
            {"Summary": summary("Xyzzy"), "Results": []},
            {"IndexName": "gb-places", "Text": "Xyzzy", "MaxResults": 1},
        )
        stub.add_response(
            "search_place_index_for_text",
            {"Summary": summary("France"), "Results": [result("France", 2.0, 46.0, "CountryType")]},
            {"IndexName": "gb-places", "Text": "France", "MaxResults": 1},
        )
        found = resolver.resolve(["Xyzzy", "France", "France"])
        stub.assert_no_pending_responses()

    assert list(found) == ["France"]
    assert found["France"].kind == "country"


@pytest.mark.parametrize(
    "code", ["ThrottlingException", "AccessDeniedException", "ResourceNotFoundException"]
)
def test_the_service_failing_is_a_502_naming_the_service(client, code):
    resolver = AwsLocationResolver("gb-places", client=client)
    with Stubber(client) as stub:
        stub.add_client_error("search_place_index_for_text", service_error_code=code, http_status_code=400)
        with pytest.raises(ProviderError) as raised:
            resolver.resolve(["Paris"])

    assert raised.value.status == 502
    assert raised.value.message == f"Amazon Location Service failed ({code})"


def test_aws_location_without_a_place_index_is_not_configured():
    with pytest.raises(NotConfigured) as raised:
        Bundle(Settings(geo=True, geo_resolver="aws-location")).geo  # noqa: B018

    assert "GB_PLACE_INDEX" in raised.value.message


def test_the_bundle_has_no_resolver_while_geo_is_off_and_the_configured_one_when_on():
    assert Bundle(Settings(geo_resolver="aws-location", place_index="p")).geo is None
    on = Bundle(Settings(geo=True, geo_resolver="aws-location", place_index="gb-places")).geo
    assert isinstance(on, AwsLocationResolver) and on.place_index == "gb-places"
    assert type(Bundle(Settings(geo=True)).geo).__name__ == "LocalGazetteer"
