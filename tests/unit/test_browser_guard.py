"""Which Host and Origin a server on this machine answers: this machine's names, the address it
listens on, and the hosts it is told to allow; never a wildcard address or a page's `null`."""

from email.message import Message

import pytest

from gligabao.local.browser_guard import LocalHosts, allowed_hosts, is_json, refusal


def headers(**values: str) -> Message:
    message = Message()
    for name, value in values.items():
        message[name.replace("_", "-")] = value
    return message


@pytest.mark.parametrize(
    "host", ["localhost", "LocalHost:7878", "127.0.0.1", "127.255.0.9:1", "[::1]", "[::1]:80"]
)
def test_the_loopback_names_are_this_machine(host):
    assert LocalHosts().host_header_is_local(host)


@pytest.mark.parametrize(
    "host",
    ["", "evil.example", "localhost.evil.example", "127.0.0.1.evil.example", "[::2]", "10.0.0.5", "a b"],
)
def test_other_names_are_not(host):
    assert not LocalHosts().host_header_is_local(host)


def test_the_address_listened_on_is_this_machine_with_or_without_its_port():
    hosts = LocalHosts.of("192.168.1.20")

    assert hosts.host_header_is_local("192.168.1.20") and hosts.host_header_is_local("192.168.1.20:7878")
    assert not hosts.host_header_is_local("192.168.1.21")


@pytest.mark.parametrize("wildcard", ["0.0.0.0", "::"])
def test_a_wildcard_address_names_no_host_only_the_allowed_ones(wildcard):
    hosts = LocalHosts.of(wildcard, ["gb.lan", " Laptop.Local "])

    assert not hosts.host_header_is_local("0.0.0.0") and not hosts.host_header_is_local("[::]")
    assert hosts.host_header_is_local("gb.lan:7878") and hosts.host_header_is_local("laptop.local")
    assert not hosts.host_header_is_local("other.lan")


@pytest.mark.parametrize(
    ("origin", "local"),
    [
        ("http://localhost:5173", True),
        ("https://127.0.0.1", True),
        ("http://[::1]:8080", True),
        ("null", False),
        ("http://evil.example", False),
        ("ftp://localhost", False),
        ("http://localhost/", False),
        ("http://user@localhost", False),
    ],
)
def test_an_origin_is_local_when_its_host_is(origin, local):
    assert LocalHosts().origin_is_local(origin) is local


def test_two_host_headers_are_refused():
    message = headers(host="localhost")
    message["host"] = "evil.example"

    assert refusal(message, LocalHosts(), has_body=False, json_only=True).status == 403


def test_a_request_with_neither_host_nor_origin_comes_from_no_browser():
    assert refusal(headers(), LocalHosts(), has_body=False, json_only=True) is None


def test_only_a_body_needs_to_be_json_and_only_where_asked():
    plain = headers(host="localhost", content_type="text/plain")

    assert refusal(plain, LocalHosts(), has_body=True, json_only=True).status == 415
    assert refusal(plain, LocalHosts(), has_body=False, json_only=True) is None
    assert refusal(plain, LocalHosts(), has_body=True, json_only=False) is None


@pytest.mark.parametrize(
    ("types", "json"),
    [
        (["application/json"], True),
        (["application/json; charset=utf-8"], True),
        (["APPLICATION/JSON"], True),
        ([], False),
        (["application/json", "text/plain"], False),
        (["application/jsonp"], False),
        (["text/plain; a=application/json"], False),
    ],
)
def test_json_is_application_json_with_or_without_parameters(types, json):
    assert is_json(types) is json


def test_the_allowed_hosts_are_comma_separated():
    assert allowed_hosts(" gb.lan, ,laptop.local ") == ["gb.lan", "laptop.local"]
    assert allowed_hosts(None) == []
