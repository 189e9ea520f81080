"""What a web page must not do to a server on this machine (the local API, the explorer): a page
of another site can make the browser send requests to 127.0.0.1, and a DNS name rebound to
127.0.0.1 makes them same-origin for the browser. So a local server answers only requests that
name this machine as their Host, that come from no page or from a local one (Origin), and, for
the local API, whose body is JSON: a browser sends application/json to another origin only after
a CORS preflight, which these servers never grant."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from email.message import Message

LOOPBACK_NAMES = frozenset({"localhost"})
WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::"})
JSON_MEDIA_TYPE = "application/json"

# Host: a name, an IPv4 address or a bracketed IPv6 address, and an optional port (RFC 9110 7.2).
_HOST = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>[0-9]{1,5}))?")
# Origin: scheme "://" host [":" port], nothing more (RFC 6454 7.1); "null" is not local.
_ORIGIN = re.compile(r"(?P<scheme>https?)://(?P<host>[^/?#@\s]+)", re.IGNORECASE)

HOST_REFUSED = (
    "this server answers only requests for this machine: the Host must be localhost, 127.0.0.1, "
    "[::1], the address it listens on, or a host allowed with --allowed-host (GB_ALLOWED_HOSTS)"
)
ORIGIN_REFUSED = (
    "requests from web pages of other origins are refused: Origin must be http(s)://localhost, "
    "127.0.0.1, [::1] or an allowed host, with any port"
)
NOT_JSON = (
    "a request body must be JSON sent as content-type: application/json "
    "(curl --json '{...}', or -H 'content-type: application/json')"
)


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


@dataclass(frozen=True)
class LocalHosts:
    """The host names a server on this machine answers to: the loopback names, the address it
    listens on (a wildcard address names no host: then only the allowed ones), and `allowed`."""

    bound: str = "127.0.0.1"
    allowed: frozenset[str] = frozenset()

    @classmethod
    def of(cls, bound: str, allowed: Iterable[str] = ()) -> LocalHosts:
        return cls(bound, frozenset(_name(host) for host in allowed if host.strip()))

    def names(self, host: str) -> bool:
        """Whether `host` (a name or an address, IPv6 with or without brackets) is this machine."""
        name = _name(host)
        if name in LOOPBACK_NAMES or name in self.allowed or _is_loopback_address(name):
            return True
        bound = _name(self.bound)
        return bound not in WILDCARD_ADDRESSES and _same_address(name, bound)

    def host_header_is_local(self, value: str) -> bool:
        match = _HOST.fullmatch(value.strip())
        return bool(match) and self.names(match["name"])

    def origin_is_local(self, value: str) -> bool:
        match = _ORIGIN.fullmatch(value.strip())
        return bool(match) and self.host_header_is_local(match["host"])


def refusal(headers: Message, hosts: LocalHosts, *, has_body: bool, json_only: bool) -> Refusal | None:
    """Why a request must not be served (None: it may): a Host not of this machine (DNS
    rebinding), a page of another origin, or, with `json_only`, a body that is not declared JSON.
    A request with no Host or no Origin header comes from no browser (curl, the client)."""
    host_values = headers.get_all("host") or []
    if len(host_values) > 1 or (host_values and not hosts.host_header_is_local(host_values[0])):
        return Refusal(403, HOST_REFUSED)
    origins = headers.get_all("origin") or []
    if any(not hosts.origin_is_local(origin) for origin in origins):
        return Refusal(403, ORIGIN_REFUSED)
    if json_only and has_body and not is_json(headers.get_all("content-type") or []):
        return Refusal(415, NOT_JSON)
    return None


def is_json(content_types: list[str]) -> bool:
    """One Content-Type, application/json with or without parameters (charset=utf-8)."""
    if len(content_types) != 1:
        return False
    return content_types[0].split(";", 1)[0].strip().lower() == JSON_MEDIA_TYPE


def allowed_hosts(text: str | None) -> list[str]:
    """The hosts of GB_ALLOWED_HOSTS (comma-separated)."""
    return [host.strip() for host in (text or "").split(",") if host.strip()]


def _name(host: str) -> str:
    return host.strip().lower().removeprefix("[").removesuffix("]")


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _is_loopback_address(name: str) -> bool:
    address = _address(name)
    return bool(address and address.is_loopback)


def _same_address(name: str, bound: str) -> bool:
    address = _address(name)
    return name == bound or (address is not None and address == _address(bound))
