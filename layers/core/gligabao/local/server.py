"""The local API: each HTTP request becomes an API Gateway HTTP API (payload 2.0) event for
the same handler the Lambda runs, chosen by the routes of template.yaml. A request a web page
could have made (another site's, or a DNS name rebound to this machine) is refused before that
(browser_guard.py).

Each request has a line in the log: on the local console (logging.use_console_lines) its method,
path (never the query string), status and duration, with its monitoring event's figures."""

from __future__ import annotations

import base64
import json
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from time import perf_counter  # the console's durations, apart from the read deadlines' clock
from urllib.parse import parse_qsl, urlsplit

from gligabao.limits import (
    LOCAL_API_MAX_BODY_BYTES,
    LOCAL_API_MAX_HEAD_BYTES,
    LOCAL_API_READ_TIMEOUT_SECONDS,
)
from gligabao.local.browser_guard import LocalHosts, refusal
from gligabao.local.containers import (
    Containers,
    FunctionCode,
    InProcessContainer,
    LambdaContext,  # noqa: F401 (imported from here by the job queue, tests and benches)
    load_handler,
)
from gligabao.local.template_routes import DEFAULT_ROUTE, Route, routes_from_template
from gligabao.observability.logging import console_lines, get_logger, log_console_line
from gligabao.observability.monitoring import ConsoleEvent

LOCAL_TIMEOUT_MS = 30_000
TEXT_TYPES = ("application/json", "text/", "application/x-www-form-urlencoded", "application/xml")


# An authorizer answers for API Gateway before any function runs: None lets the event through
# (maybe with what it adds to requestContext), else the response (local/jwt_authorizer.py).
Authorizer = Callable[[dict], tuple[int, dict[str, str], bytes] | None]


class LocalApi:
    def __init__(
        self, template: Path, authorizer: Authorizer | None = None, containers: Containers | None = None
    ):
        self.routes = routes_from_template(template)
        self.authorizer = authorizer
        self._handlers: dict[tuple[Path, str], Callable] = {}
        self._lock = threading.Lock()
        # Where the handlers run (local/containers.py): worker processes, or one thread of this process.
        self.containers = containers or InProcessContainer(self._handler_of_code)

    def find_route(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """API Gateway's choice: the method's own route first, then ANY, then $default."""
        for wanted in (method, "ANY"):
            for route in self.routes:
                params = route.match(path)
                if route.method == wanted and params is not None:
                    return route, params
        default = next((route for route in self.routes if route.path == DEFAULT_ROUTE), None)
        return (default, {}) if default else None

    def handler_of(self, route: Route) -> Callable:
        return self._handler_of_code(function_code(route))

    def _handler_of_code(self, code: FunctionCode) -> Callable:
        key = (code.code_uri, code.handler)
        with self._lock:
            if key not in self._handlers:
                self._handlers[key] = load_handler(code)
            return self._handlers[key]

    def invoke(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
        source_ip: str,
        console_events: list[ConsoleEvent] | None = None,
    ) -> tuple:
        url = urlsplit(target)
        found = self.find_route(method, url.path)
        if found is None:
            return 404, {"content-type": "application/json"}, json.dumps({"error": "not found"}).encode()
        route, params = found
        event = build_event(route, params, method, url.path, url.query, headers, body, source_ip)
        denied = self.authorizer(event) if self.authorizer else None
        if denied is not None:
            return denied
        # LOCAL_TIMEOUT_MS read at each invocation: a test shortens it
        result = self.containers.invoke(
            function_code(route),
            event,
            event["requestContext"]["requestId"],
            LOCAL_TIMEOUT_MS,
            console_events,
        )
        return decode_result(result)


def function_code(route: Route) -> FunctionCode:
    return FunctionCode(route.function, route.code_uri, route.handler)


def build_event(
    route: Route,
    params: dict[str, str],
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
    source_ip: str,
) -> dict:
    now = datetime.now(UTC)
    route_key = DEFAULT_ROUTE if route.path == DEFAULT_ROUTE else f"{route.method} {route.path}"
    lowered = {name.lower(): value for name, value in headers.items()}
    event = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path,
        "rawQueryString": query,
        "headers": lowered,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": lowered.get("host", "localhost"),
            "domainPrefix": "local",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": lowered.get("user-agent", ""),
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": route_key,
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    if "cookie" in lowered:
        event["cookies"] = [part.strip() for part in lowered["cookie"].split(";")]
    query_params = _query_parameters(query)
    if query_params:
        event["queryStringParameters"] = query_params
    if params:
        event["pathParameters"] = params
    if body:
        event["body"], event["isBase64Encoded"] = _event_body(body, lowered.get("content-type", ""))
    return event


def _query_parameters(query: str) -> dict[str, str]:
    joined: dict[str, list[str]] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        joined.setdefault(name, []).append(value)
    return {name: ",".join(values) for name, values in joined.items()}


def _event_body(body: bytes, content_type: str) -> tuple[str, bool]:
    if not content_type or content_type.startswith(TEXT_TYPES):
        try:
            return body.decode("utf-8"), False
        except UnicodeDecodeError:
            pass
    return base64.b64encode(body).decode("ascii"), True


def decode_result(result: dict | str) -> tuple[int, dict[str, str], bytes]:
    """The HTTP response of a payload 2.0 result (a full response, or a bare JSON value)."""
    if not isinstance(result, dict) or "statusCode" not in result:
        return 200, {"content-type": "application/json"}, json.dumps(result).encode()
    headers = {name.lower(): str(value) for name, value in (result.get("headers") or {}).items()}
    body = result.get("body") or ""
    raw = base64.b64decode(body) if result.get("isBase64Encoded") else body.encode("utf-8")
    return int(result["statusCode"]), headers, raw


# Any method reaches the functions, as on API Gateway, whose `ANY` routes (template.yaml) match every
# method: a function answers 405 with Allow on a path it serves with other methods (BREW, PROPFIND,
# TRACE included). A method that is not an HTTP token (RFC 9110, section 9.1) is a malformed request.
_METHOD_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTENT_LENGTH = re.compile(r"[0-9]+")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")
_CHUNK_LINE_MAX_BYTES = 1024  # a chunk's size line, extensions included
_READ_STEP_BYTES = 64 * 1024

# What the client is told (and the log says) when the request itself is unreadable: fixed texts,
# never the raw request line, which may hold anything.
_FRAMING_ERRORS = {
    400: "malformed request line: it must be METHOD PATH HTTP/1.1",
    408: "the request did not arrive in time",
    414: f"request line longer than {LOCAL_API_MAX_HEAD_BYTES} bytes",
    431: f"request line and headers longer than {LOCAL_API_MAX_HEAD_BYTES} bytes, or too many headers",
    505: "HTTP version not supported: HTTP/1.0 and HTTP/1.1 only",
}


class Refused(Exception):
    """A request answered before any function sees it; the connection is closed after."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class _RequestHandler(BaseHTTPRequestHandler):
    api: LocalApi
    hosts: LocalHosts
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.0"  # an error about the request line still gets a status line
    disable_nagle_algorithm = True  # small JSON replies would otherwise wait ~40 ms for an ACK
    server_version = "gligabao-local"
    timeout = LOCAL_API_READ_TIMEOUT_SECONDS  # every read of the socket: no thread waits forever
    quiet = False

    def handle_one_request(self) -> None:
        """BaseHTTPRequestHandler's, with API Gateway's limits and {"error": ...} for every refusal."""
        self.command, self.path, self.requestline, self.raw_requestline = None, "", "", b""
        self.request_version = self.default_request_version
        self.console_events: list[ConsoleEvent] = []  # the request line's figures (the console)
        self.refused_because: str | None = None
        self.started = perf_counter()
        try:
            self.raw_requestline = self.rfile.readline(LOCAL_API_MAX_HEAD_BYTES + 1)
            self.started = perf_counter()
            if len(self.raw_requestline) > LOCAL_API_MAX_HEAD_BYTES:
                self._refuse(Refused(414, _FRAMING_ERRORS[414]))
                return
            if not self.raw_requestline:
                self.close_connection = True
                return
            if not self.parse_request():
                return
            self._serve()
            self.wfile.flush()
        except TimeoutError:
            if self.raw_requestline:  # its headers stopped arriving
                self._refuse(Refused(408, _FRAMING_ERRORS[408]))
            self.close_connection = True  # else an idle kept-alive connection: closed quietly
        except (BrokenPipeError, ConnectionResetError):  # the client went away mid-reply: it asks no more
            self.close_connection = True

    def parse_request(self) -> bool:
        if len(self.raw_requestline.split()) == 2:  # HTTP/0.9 ("GET /"): no version, no headers
            self._refuse(Refused(400, _FRAMING_ERRORS[400]))
            return False
        if not super().parse_request():
            return False
        head = len(self.raw_requestline) + sum(len(value) for value in self.headers.values())
        if head > LOCAL_API_MAX_HEAD_BYTES:
            self._refuse(Refused(431, _FRAMING_ERRORS[431]))
            return False
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server's own refusals (bad request line, header line too long, HTTP/2.0, ...): its
        # message quotes the raw request line, so a fixed text is sent instead.
        self._refuse(Refused(code, _FRAMING_ERRORS.get(code) or HTTPStatus(code).phrase))

    def _serve(self) -> None:
        if not _METHOD_TOKEN.fullmatch(self.command):
            self._refuse(Refused(400, _FRAMING_ERRORS[400]))
            return
        try:
            body = self._read_body()
        except Refused as refused:
            self._refuse(refused)
            return
        # After the body is read (the connection stays in step), before any function runs.
        refused = refusal(self.headers, self.hosts, has_body=bool(body), json_only=True)
        if refused is not None:
            self._refuse(Refused(refused.status, refused.message))
            return
        try:
            status, headers, raw = self.api.invoke(
                self.command,
                self.path,
                dict(self.headers.items()),
                body,
                self.client_address[0],
                self.console_events if console_lines() else None,
            )
        except Exception:  # a handler that raised: API Gateway answers 500 without details
            get_logger().exception("local API: the handler raised")
            status, headers, raw = 500, {"content-type": "application/json"}, b'{"error": "internal error"}'
        self._respond(status, headers, raw)

    def _read_body(self) -> bytes:
        """The body as Content-Length or chunked Transfer-Encoding frame it (RFC 9112, section 6)."""
        lengths = self.headers.get_all("content-length") or []
        encodings = self.headers.get_all("transfer-encoding") or []
        if encodings:
            if lengths:  # which one frames the body? (request smuggling): refused
                raise Refused(400, "a request must not carry both Content-Length and Transfer-Encoding")
            codings = [coding.strip().lower() for value in encodings for coding in value.split(",")]
            if codings != ["chunked"]:
                raise Refused(501, "Transfer-Encoding other than chunked is not implemented")
            return self._read_chunked()
        if not lengths:
            return b""
        values = {part.strip() for value in lengths for part in value.split(",")}
        if len(values) != 1:
            raise Refused(400, "Content-Length headers disagree")
        (value,) = values
        if not _CONTENT_LENGTH.fullmatch(value):
            raise Refused(400, "Content-Length must be a non-negative integer")
        if (
            len(value.lstrip("0")) > len(str(LOCAL_API_MAX_BODY_BYTES))
            or int(value) > LOCAL_API_MAX_BODY_BYTES
        ):
            raise Refused(413, f"request body larger than {LOCAL_API_MAX_BODY_BYTES} bytes")
        return self._read_exactly(int(value), time.monotonic())

    def _read_chunked(self) -> bytes:
        started, body = time.monotonic(), bytearray()
        while True:
            line = self.rfile.readline(_CHUNK_LINE_MAX_BYTES + 1)
            size_text = line.split(b";", 1)[0].strip()
            if len(line) > _CHUNK_LINE_MAX_BYTES or not _CHUNK_SIZE.fullmatch(size_text):
                raise Refused(400, "malformed chunked body: a chunk size must be hexadecimal")
            size = int(size_text, 16)
            if size == 0:
                self._skip_trailers()
                return bytes(body)
            if len(body) + size > LOCAL_API_MAX_BODY_BYTES:
                raise Refused(413, f"request body larger than {LOCAL_API_MAX_BODY_BYTES} bytes")
            body += self._read_exactly(size, started)
            if self._read_exactly(2, started) != b"\r\n":
                raise Refused(400, "malformed chunked body: a chunk must end with CRLF")

    def _skip_trailers(self) -> None:
        for _ in range(100):
            line = self.rfile.readline(_CHUNK_LINE_MAX_BYTES + 1)
            if line in (b"\r\n", b"\n", b""):
                return
        raise Refused(431, "too many trailer fields after the chunked body")

    def _read_exactly(self, length: int, started: float) -> bytes:
        """`length` bytes, or a refusal: 400 when the client stops early, 408 when it is too slow."""
        data = bytearray()
        while len(data) < length:
            if time.monotonic() - started > self.timeout:
                raise Refused(408, _FRAMING_ERRORS[408])
            try:
                step = self.rfile.read1(min(_READ_STEP_BYTES, length - len(data)))
            except TimeoutError:
                raise Refused(408, _FRAMING_ERRORS[408]) from None
            if not step:
                raise Refused(400, "the body is shorter than its Content-Length or chunk size")
            data += step
        return bytes(data)

    def _respond(self, status: int, headers: dict[str, str], raw: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(raw)))
        if self.close_connection:
            self.send_header("connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(raw)

    def _refuse(self, refused: Refused) -> None:
        """{"error": ...} with the refusal's status; the connection is closed (its framing is unknown)."""
        self.close_connection = True
        self.refused_because = refused.message
        if not self.quiet and not console_lines():  # the console says it on the request's line
            get_logger().warning(
                f"local API refused a request: {refused.status} {refused.message}",
                extra={"status": refused.status, "client": self.client_address[0]},
            )
        try:
            self._respond(
                refused.status,
                {"content-type": "application/json"},
                json.dumps({"error": refused.message}).encode(),
            )
        except OSError:  # the client is gone
            pass

    def log_request(self, code="-", size="-") -> None:
        # The path only (a query string may carry user ids or tokens), through the redacting logger.
        if self.quiet:
            return
        path = urlsplit(self.path).path if self.path else "-"
        if console_lines():
            log_console_line(self._console_line(path, code))
        else:
            get_logger().info(
                f"{self.command or '-'} {path} {int(code) if str(code).isdigit() else code}",
                extra={"method": self.command, "path": path, "status": code},
            )

    def _console_line(self, path: str, code) -> str:
        """`POST /v1/gb/remember 200 812 ms: 2 new entities, 1 new edge, 349 tokens`."""
        elapsed_ms = (perf_counter() - self.started) * 1000
        status = int(code) if str(code).isdigit() else code
        line = f"{self.command or '-'} {path} {status} {elapsed_ms:.0f} ms"
        if self.refused_because:
            return f"{line}: {self.refused_because}"
        return line + (self.console_events[-1].details() if self.console_events else "")

    def log_message(self, format: str, *args) -> None:
        if not self.quiet:
            get_logger().warning("local API: " + format % args)


def make_server(
    template: Path,
    host: str = "127.0.0.1",
    port: int = 7878,
    quiet: bool = False,
    authorizer: Authorizer | None = None,
    read_timeout: float = LOCAL_API_READ_TIMEOUT_SECONDS,
    containers: Containers | None = None,
    allowed_hosts: Iterable[str] = (),
) -> ThreadingHTTPServer:
    """The local API; `containers`: where the handlers run (default: one thread of this process);
    `allowed_hosts`: names it answers to besides this machine's loopback ones and `host`
    (browser_guard.py)."""
    api = LocalApi(template, authorizer, containers)
    hosts = LocalHosts.of(host, allowed_hosts)
    handler_class = type(
        "Handler",
        (_RequestHandler,),
        {"api": api, "hosts": hosts, "quiet": quiet, "timeout": read_timeout},
    )
    server_class = type(
        "LocalApiServer",
        (ThreadingHTTPServer,),
        {"request_queue_size": 64, "daemon_threads": True, "handle_error": _log_connection_error, "api": api},
    )
    if ":" in host:
        server_class.address_family = socket.AF_INET6
    return server_class((host, port), handler_class)  # OSError when it cannot listen there


def _log_connection_error(server: ThreadingHTTPServer, request: object, client_address: object) -> None:
    """What socketserver would print to stderr (a traceback): through the redacting logger instead."""
    error = sys.exc_info()[1]
    if isinstance(error, ConnectionError):  # the client went away mid-reply: nothing to fix here
        get_logger().info(
            "local API: the client closed the connection", extra={"error_type": type(error).__name__}
        )
        return
    get_logger().exception("local API: a connection failed", extra={"error_type": type(error).__name__})
