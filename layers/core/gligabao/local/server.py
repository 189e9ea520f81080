"""The local API: each HTTP request becomes an API Gateway HTTP API (payload 2.0) event for
the same handler the Lambda runs, chosen by the routes of template.yaml."""

from __future__ import annotations

import base64
import importlib.util
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from gligabao.local.template_routes import DEFAULT_ROUTE, Route, routes_from_template

LOCAL_TIMEOUT_MS = 30_000
TEXT_TYPES = ("application/json", "text/", "application/x-www-form-urlencoded", "application/xml")


class LambdaContext:
    """What a handler reads from the Lambda context."""

    def __init__(self, function_name: str, request_id: str):
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.aws_request_id = request_id
        self.memory_limit_in_mb = 1024
        self.invoked_function_arn = f"arn:aws:lambda:local:000000000000:function:{function_name}"
        self._deadline = time.monotonic() + LOCAL_TIMEOUT_MS / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


# An authorizer answers for API Gateway before any function runs: None lets the event through
# (maybe with what it adds to requestContext), else the response (local/jwt_authorizer.py).
Authorizer = Callable[[dict], tuple[int, dict[str, str], bytes] | None]


class LocalApi:
    def __init__(self, template: Path, authorizer: Authorizer | None = None):
        self.routes = routes_from_template(template)
        self.authorizer = authorizer
        self._handlers: dict[tuple[Path, str], Callable] = {}
        self._lock = threading.Lock()
        # Powertools keeps the current event on a class attribute, shared by every router of the
        # process: like one Lambda container, the local API runs one invocation at a time.
        self._invocation = threading.Lock()

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
        key = (route.code_uri, route.handler)
        with self._lock:
            if key not in self._handlers:
                self._handlers[key] = _load_handler(route)
            return self._handlers[key]

    def invoke(self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str) -> tuple:
        url = urlsplit(target)
        found = self.find_route(method, url.path)
        if found is None:
            return 404, {"content-type": "application/json"}, json.dumps({"error": "not found"}).encode()
        route, params = found
        event = build_event(route, params, method, url.path, url.query, headers, body, source_ip)
        denied = self.authorizer(event) if self.authorizer else None
        if denied is not None:
            return denied
        handler = self.handler_of(route)
        with self._invocation:
            result = handler(event, LambdaContext(route.function, event["requestContext"]["requestId"]))
        return decode_result(result)


def _load_handler(route: Route) -> Callable:
    module_name, function_name = route.handler.rsplit(".", 1)
    source = route.code_uri / f"{module_name.replace('.', '/')}.py"
    spec = importlib.util.spec_from_file_location(f"gligabao_function_{route.function}", source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, function_name)


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


class _RequestHandler(BaseHTTPRequestHandler):
    api: LocalApi
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small JSON replies would otherwise wait ~40 ms for an ACK
    server_version = "gligabao-local"

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            status, headers, raw = self.api.invoke(
                self.command, self.path, dict(self.headers.items()), body, self.client_address[0]
            )
        except Exception:  # a handler that raised: API Gateway answers 500 without details
            from gligabao.observability.logging import get_logger

            get_logger().exception("local API: the handler raised")
            status, headers, raw = 500, {"content-type": "application/json"}, b'{"error": "internal error"}'
        self.send_response(status)
        for name, value in headers.items():
            if name not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def log_request(self, code="-", size="-") -> None:
        # The path only: a query string may carry user ids or tokens, and logs never hold them.
        sys.stderr.write(f"{self.command} {urlsplit(self.path).path} {code}\n")


def make_server(
    template: Path,
    host: str = "127.0.0.1",
    port: int = 7878,
    quiet: bool = False,
    authorizer: Authorizer | None = None,
) -> ThreadingHTTPServer:
    api = LocalApi(template, authorizer)
    handler_class = type("Handler", (_RequestHandler,), {"api": api})
    if quiet:
        handler_class.log_message = handler_class.log_request = lambda *args, **kwargs: None
    server_class = type(
        "LocalApiServer", (ThreadingHTTPServer,), {"request_queue_size": 64, "daemon_threads": True}
    )
    server = server_class((host, port), handler_class)
    return server
