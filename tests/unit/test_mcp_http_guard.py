"""The rules guarding `gligabao mcp --http`, without a socket: which addresses are loopback, when
the token is required, the Host and Origin values accepted, and the token check itself (the
middleware called as ASGI). tests/e2e/test_mcp_http_security.py sends the attacks over HTTP."""

from __future__ import annotations

import anyio
import pytest

from gligabao.client.mcp_http import (
    ExposedWithoutToken,
    RequireBearerToken,
    is_loopback,
    require_token_off_loopback,
    transport_security,
)

TOKEN = "a-long-random-token-for-the-mcp-clients"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]", "localhost"])
def test_loopback_is_127_0_0_0_8_and_ipv6_1_and_localhost(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "fe80::1", "mcp.lan", ""])
def test_a_wildcard_a_lan_address_or_a_name_is_not_loopback(host):
    assert not is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "mcp.lan"])
def test_off_loopback_the_token_is_required_and_named(host):
    with pytest.raises(ExposedWithoutToken, match="GB_MCP_TOKEN"):
        require_token_off_loopback(host, None)
    with pytest.raises(ExposedWithoutToken):
        require_token_off_loopback(host, "")
    require_token_off_loopback(host, TOKEN)


def test_on_loopback_the_token_is_optional():
    require_token_off_loopback("127.0.0.1", None)
    require_token_off_loopback("::1", None)


def test_by_default_only_the_loopback_names_with_the_port_are_accepted():
    settings = transport_security("127.0.0.1", 8000)

    assert settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == ["127.0.0.1:8000", "localhost:8000", "[::1]:8000"]
    assert settings.allowed_origins == ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"]


@pytest.mark.parametrize("wildcard", ["0.0.0.0", "::"])
def test_a_wildcard_bind_keeps_the_protection_and_adds_no_host(wildcard):
    settings = transport_security(wildcard, 8000)

    assert settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == ["127.0.0.1:8000", "localhost:8000", "[::1]:8000"]


@pytest.mark.parametrize(
    "host, header",
    [("192.168.1.5", "192.168.1.5:8000"), ("fd00::5", "[fd00::5]:8000"), ("mcp.lan", "mcp.lan:8000")],
)
def test_a_specific_bound_host_is_accepted_with_its_port(host, header):
    settings = transport_security(host, 8000)

    assert settings.allowed_hosts[-1] == header
    assert settings.allowed_origins[-1] == f"http://{header}"


def test_the_hosts_and_origins_the_operator_adds_are_accepted_as_given():
    settings = transport_security(
        "0.0.0.0",
        8000,
        allowed_hosts=["localhost:9000", "mcp.example.com"],
        allowed_origins=["http://localhost:6274"],
    )

    assert settings.allowed_hosts[-2:] == ["localhost:9000", "mcp.example.com"]
    assert settings.allowed_origins[-5:] == [
        "http://localhost:9000",
        "https://localhost:9000",
        "http://mcp.example.com",
        "https://mcp.example.com",
        "http://localhost:6274",
    ]


class Behind:
    """The app behind the middleware: records the scopes that reach it."""

    def __init__(self) -> None:
        self.scopes: list[dict] = []

    async def __call__(self, scope, receive, send) -> None:
        self.scopes.append(scope)


def call(scope: dict) -> tuple[list[dict], list[dict]]:
    """The messages the middleware sent, and the scopes that reached the app behind it."""
    behind, sent = Behind(), []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    anyio.run(RequireBearerToken(behind, TOKEN), scope, receive, send)
    return sent, behind.scopes


def http_scope(authorization: str | None) -> dict:
    headers = [(b"host", b"127.0.0.1:8000")]
    if authorization is not None:
        headers.append((b"authorization", authorization.encode()))
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "query_string": b""}


@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", TOKEN]
)
def test_without_the_token_the_request_gets_a_401_and_goes_no_further(authorization):
    sent, reached = call(http_scope(authorization))

    assert reached == []
    start = sent[0]
    assert start["status"] == 401
    assert (b"www-authenticate", b'Bearer realm="gligabao-mcp"') in start["headers"]
    assert b"GB_MCP_TOKEN" in sent[1]["body"]


@pytest.mark.parametrize("authorization", [f"Bearer {TOKEN}", f"bearer {TOKEN}"])
def test_with_the_token_the_request_goes_through(authorization):
    sent, reached = call(http_scope(authorization))

    assert sent == [] and len(reached) == 1


def test_the_servers_lifespan_is_not_a_request():
    _, reached = call({"type": "lifespan"})

    assert reached == [{"type": "lifespan"}]
