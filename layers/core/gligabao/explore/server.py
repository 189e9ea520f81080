"""The explorer's server: the page and its static files, and a proxy of the page's API calls
(`/v1/gb/...`) to the API, signed when the API wants SigV4.

The proxy runs with the user's credentials, so it only answers the page: requests must name this
machine as their Host (no DNS rebinding), come from no page or a local one (Origin), and carry the
page's own header (which a cross-site form or script cannot send without a CORS preflight this
server never grants), as local/browser_guard.py says. And it calls only the API: a request target
must be a plain path under /v1/gb/ (origin-form), from which alone the API's URL is made."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import httpx2

from gligabao.client.errors import GligabaoError
from gligabao.limits import EXPLORER_PROXY_MAX_BODY_BYTES, EXPLORER_PROXY_TIMEOUT_SECONDS
from gligabao.local.browser_guard import LocalHosts, refusal

STATIC = Path(__file__).resolve().parent / "static"
API_PREFIX = "/v1/gb/"
PAGE_HEADER = "X-Gligabao-Explorer"  # sent by the page on every API call
# A request target in origin-form (RFC 9112, section 3.2.1): one "/", then path characters
# (RFC 3986: unreserved, percent-encoded, sub-delims, ":" and "@"), then maybe "?" and a query.
# Not an absolute URL, an authority, "*", "//host/...", a backslash, a space or a fragment.
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
_ORIGIN_FORM = re.compile(rf"(?P<path>/(?!/)(?:{_PCHAR}|/)*)(?:\?(?P<query>(?:{_PCHAR}|[/?])*))?")
_CONTENT_LENGTH = re.compile(r"[0-9]{1,12}")
BAD_TARGET = "the request target must be a path of this server (/..., or /v1/gb/... for the API)"
_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}
# The page runs only its own files: no inline script, nothing from elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# Passed back from the API to the page; hop-by-hop and length headers are the proxy's own.
_FORWARDED_RESPONSE_HEADERS = ("content-type", "x-next-cursor", "retry-after")


@dataclass(frozen=True)
class Target:
    """A request target checked to be a path of this server, and its query ("" when none)."""

    path: str
    query: str

    @property
    def for_the_api(self) -> bool:
        return self.path.startswith(API_PREFIX)


def origin_form(target: str) -> Target | None:
    """The path and query of `target` when it is in origin-form and names no dot segment
    ("/v1/gb/../x" would leave the API's prefix); None for anything else."""
    match = _ORIGIN_FORM.fullmatch(target)
    if match is None or any(unquote(part) in (".", "..") for part in match["path"].split("/")):
        return None
    return Target(match["path"], match["query"] or "")


class ApiProxy:
    """Forwards one call to the API (authenticated by `auth`, an httpx2 authentication of the
    Python client) and returns its status, headers and body; an API that cannot be reached, or a
    call that cannot be signed, is a 502 that says which API and why."""

    def __init__(
        self, api_url: str, auth: httpx2.Auth | None = None, timeout: float = EXPLORER_PROXY_TIMEOUT_SECONDS
    ):
        self.api_url = api_url.rstrip("/")
        self._http = httpx2.Client(auth=auth, timeout=timeout, headers={"accept": "application/json"})

    def url_of(self, target: Target) -> str:
        """The API's URL and the target's path and query: a path of one leading "/" and path
        characters only, after the API's own authority, cannot name another host."""
        return self.api_url + target.path + (f"?{target.query}" if target.query else "")

    def forward(self, method: str, target: Target, body: bytes | None) -> tuple[int, dict[str, str], bytes]:
        headers = {"content-type": "application/json"} if body is not None else {}
        try:
            response = self._http.request(method, self.url_of(target), content=body, headers=headers)
        except httpx2.TransportError as error:
            return _error(502, f"the API at {self.api_url} did not answer: {error or type(error).__name__}")
        except GligabaoError as error:  # the client's signing: credentials gone, expired SSO, ...
            return _error(502, f"could not sign the call of the API: {error}")
        return response.status_code, _kept(response.headers), response.content


def _kept(headers) -> dict[str, str]:
    return {name: headers[name] for name in _FORWARDED_RESPONSE_HEADERS if headers.get(name)}


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps({"error": message}).encode()


class _ExplorerHandler(BaseHTTPRequestHandler):
    proxy: ApiProxy
    hosts: LocalHosts
    server_version = "gligabao-explore"
    protocol_version = "HTTP/1.1"

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):  # the client went away (a reload): no one to answer
            self.close_connection = True

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        refused = refusal(self.headers, self.hosts, has_body=False, json_only=False)
        if refused is not None:
            self.close_connection = True
            return self._send(*_error(refused.status, refused.message))
        # The target as sent: http.server has already made "//host/x" into "/host/x" in self.path.
        words = self.requestline.split()
        target = origin_form(words[1]) if len(words) == 3 else None
        if target is None:
            self.close_connection = True
            return self._send(*_error(400, BAD_TARGET))
        if target.for_the_api:
            return self._proxy(target)
        if self.command != "GET":
            return self._send(*_error(405, f"{self.command} is not served here"))
        if target.path in ("/", "/index.html"):
            return self._static("index.html")
        if target.path.startswith("/static/"):
            return self._static(target.path.removeprefix("/static/"))
        return self._send(*_error(404, f"{target.path} not found"))

    def _static(self, name: str) -> None:
        # Only the files that are there, by their exact name: no path reaches outside the folder.
        files = {path.name: path for path in STATIC.iterdir() if path.is_file()}
        if name not in files:
            return self._send(*_error(404, f"/static/{name} not found"))
        content_type = _CONTENT_TYPES.get(files[name].suffix, "application/octet-stream")
        headers = {"content-type": content_type, "cache-control": "no-cache"}
        if name == "index.html":
            headers["content-security-policy"] = CONTENT_SECURITY_POLICY
        self._send(200, headers, files[name].read_bytes())

    def _proxy(self, target: Target) -> None:
        if self.headers.get(PAGE_HEADER) != "1":
            return self._send(*_error(403, f"API calls through the explorer need the {PAGE_HEADER} header"))
        lengths = self.headers.get_all("content-length") or []
        if (
            self.headers.get("transfer-encoding")
            or len(lengths) > 1
            or not _CONTENT_LENGTH.fullmatch((lengths or ["0"])[0].strip())
        ):  # the page sends one Content-Length: anything else could frame a second request
            self.close_connection = True
            return self._send(*_error(400, "the explorer takes a body framed by one Content-Length"))
        length = int(lengths[0]) if lengths else 0
        if length > EXPLORER_PROXY_MAX_BODY_BYTES:
            self.close_connection = True
            return self._send(*_error(413, "request body too large for the explorer"))
        body = self.rfile.read(length) if length else None
        if self.command == "POST" and body is None:
            body = b""
        self._send(*self.proxy.forward(self.command, target, body))

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.send_header("x-content-type-options", "nosniff")
        self.send_header("referrer-policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (a method it has no handler for, a bad request line) as JSON."""
        self.close_connection = True
        self._send(*_error(code, message or f"HTTP {code}"))

    def log_message(self, format: str, *args) -> None:  # the page's calls are not worth a line each
        pass


def make_server(
    api_url: str,
    host: str = "127.0.0.1",
    port: int = 0,
    auth: httpx2.Auth | None = None,
    allowed_hosts: Iterable[str] = (),
) -> ThreadingHTTPServer:
    """The explorer on `host`:`port`; `allowed_hosts`: names it answers to besides this machine's
    loopback ones and `host` (local/browser_guard.py)."""
    attributes = {"proxy": ApiProxy(api_url, auth), "hosts": LocalHosts.of(host, allowed_hosts)}
    handler = type("ExplorerHandler", (_ExplorerHandler,), attributes)
    server_class = type("ExplorerServer", (ThreadingHTTPServer,), {"daemon_threads": True})
    if ":" in host:
        server_class.address_family = socket.AF_INET6
    return server_class((host, port), handler)
