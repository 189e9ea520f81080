"""The explorer's server: the page and its static files, and a proxy of the page's API calls
(`/v1/gb/...`) to the API, signed when the API wants SigV4.

The proxy runs with the user's credentials, so it only answers the page: requests must name this
server as their Host (no DNS rebinding) and carry the page's own header (which a cross-site form
or script cannot send without a CORS preflight this server never grants)."""

from __future__ import annotations

import json
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import httpx2

from gligabao.client.errors import GligabaoError
from gligabao.limits import EXPLORER_PROXY_MAX_BODY_BYTES, EXPLORER_PROXY_TIMEOUT_SECONDS

STATIC = Path(__file__).resolve().parent / "static"
API_PREFIX = "/v1/gb/"
PAGE_HEADER = "X-Gligabao-Explorer"  # sent by the page on every API call
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
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


class ApiProxy:
    """Forwards one call to the API (authenticated by `auth`, an httpx2 authentication of the
    Python client) and returns its status, headers and body; an API that cannot be reached, or a
    call that cannot be signed, is a 502 that says which API and why."""

    def __init__(
        self, api_url: str, auth: httpx2.Auth | None = None, timeout: float = EXPLORER_PROXY_TIMEOUT_SECONDS
    ):
        self.api_url = api_url.rstrip("/")
        self._http = httpx2.Client(auth=auth, timeout=timeout, headers={"accept": "application/json"})

    def forward(
        self, method: str, path_and_query: str, body: bytes | None
    ) -> tuple[int, dict[str, str], bytes]:
        headers = {"content-type": "application/json"} if body is not None else {}
        try:
            response = self._http.request(
                method, self.api_url + path_and_query, content=body, headers=headers
            )
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
    server_version = "gligabao-explore"
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        if not self._host_is_local():
            return self._send(*_error(403, "the explorer answers only requests for localhost"))
        path = urlsplit(self.path).path
        if path.startswith(API_PREFIX):
            return self._proxy()
        if self.command != "GET":
            return self._send(*_error(405, f"{self.command} is not served here"))
        if path in ("/", "/index.html"):
            return self._static("index.html")
        if path.startswith("/static/"):
            return self._static(path.removeprefix("/static/"))
        return self._send(*_error(404, f"{path} not found"))

    def _host_is_local(self) -> bool:
        host = self.headers.get("host", "")
        hostname = urlsplit(f"//{host}").hostname or ""
        return hostname in LOCAL_HOSTS or hostname == self.server.server_address[0]

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

    def _proxy(self) -> None:
        if self.headers.get(PAGE_HEADER) != "1":
            return self._send(*_error(403, f"API calls through the explorer need the {PAGE_HEADER} header"))
        length = int(self.headers.get("content-length") or 0)
        if length > EXPLORER_PROXY_MAX_BODY_BYTES:
            self.close_connection = True
            return self._send(*_error(413, "request body too large for the explorer"))
        body = self.rfile.read(length) if length else None
        if self.command == "POST" and body is None:
            body = b""
        self._send(*self.proxy.forward(self.command, self.path, body))

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
    api_url: str, host: str = "127.0.0.1", port: int = 0, auth: httpx2.Auth | None = None
) -> ThreadingHTTPServer:
    handler = type("ExplorerHandler", (_ExplorerHandler,), {"proxy": ApiProxy(api_url, auth)})
    server_class = type("ExplorerServer", (ThreadingHTTPServer,), {"daemon_threads": True})
    if ":" in host:
        server_class.address_family = socket.AF_INET6
    return server_class((host, port), handler)
