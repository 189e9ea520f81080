"""How `gligabao mcp --http` guards its port. The server calls the API with the operator's
credentials, so whoever reaches the port acts as the operator on that user's memory:

* DNS rebinding: a web page whose name resolves to this machine would reach the port from the
  browser. Every request's `Host` must be one the server is reached by (the loopback names with
  the port, the bound address when it is a specific one, and the hosts the operator adds) and its
  `Origin`, when a browser sends one, one of those hosts' too (or one the operator adds). The
  SDK's own check, turned on here whatever the bound host (the SDK leaves it off for 0.0.0.0).
* Other machines: bound to anything but a loopback address, the server needs the bearer token of
  `GB_MCP_TOKEN` on every request (on loopback too when the variable is set). The token is an
  environment variable, never a flag: a command line is visible to every user (`ps`) and kept in
  shell histories.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from collections.abc import Sequence

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_VARIABLE = "GB_MCP_TOKEN"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class ExposedWithoutToken(ValueError):
    """A non-loopback address to listen on, and no token to ask of callers."""


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and `localhost`: only this machine can connect."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: it may resolve to any interface
        return False


def require_token_off_loopback(host: str, token: str | None) -> None:
    """ExposedWithoutToken when `host` is reachable from other machines and there is no token."""
    if not token and not is_loopback(host):
        raise ExposedWithoutToken(
            f"--host {host} listens beyond this machine: set {TOKEN_VARIABLE} to a secret token, "
            f"which every MCP client must then send as `Authorization: Bearer <token>` "
            "(or listen on 127.0.0.1)"
        )


def check_can_listen(host: str, port: int) -> None:
    """OSError (OverflowError for a port past 65535) when host:port cannot be listened on, found
    as uvicorn binds (SO_REUSEADDR) but before it starts, so that the command says it in one line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def host_header(host: str, port: int) -> str:
    """The `Host` a client sends to reach host:port (an IPv6 address in brackets)."""
    try:
        if ipaddress.ip_address(host.strip("[]")).version == 6:
            return f"[{host.strip('[]')}]:{port}"
    except ValueError:
        pass
    return f"{host}:{port}"


def transport_security(
    host: str, port: int, *, allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = ()
) -> TransportSecuritySettings:
    """DNS-rebinding protection, always on: the `Host` values the loopback names with `port`, the
    bound host with `port` unless it is a wildcard (0.0.0.0, ::), and `allowed_hosts` as given
    (`mcp.lan:8000`, the port a container publishes: `localhost:9000`); the `Origin` values those
    hosts' own (http://, and https:// for `allowed_hosts`, which may sit behind a TLS proxy) and
    `allowed_origins` as given."""
    served = [f"{name}:{port}" for name in LOOPBACK_NAMES]
    if not _is_wildcard(host):
        served.append(host_header(host, port))
    hosts = _unique([*served, *allowed_hosts])
    origins = _unique(
        [
            *(f"http://{h}" for h in served),
            *(f"{scheme}://{h}" for h in allowed_hosts for scheme in ("http", "https")),
            *allowed_origins,
        ]
    )
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class RequireBearerToken:
    """ASGI middleware: an HTTP request without `Authorization: Bearer <token>` gets a 401 and goes
    no further. The tokens are compared by their SHA-256 digests in constant time (neither the
    content nor the length of the token shows in the timing)."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._digest = _digest(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(Headers(scope=scope).get("authorization")):
            refusal = JSONResponse(
                {"error": f"unauthorized: send the token of {TOKEN_VARIABLE} as Authorization: Bearer"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="gligabao-mcp"'},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, header: str | None) -> bool:
        scheme, _, presented = (header or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(_digest(presented.strip()), self._digest)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return host == ""


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))
