"""A local HTTP server for the fake model providers: records every request, answers through `handle`."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lowercased
    body: Any  # the parsed JSON body, None when it was not JSON


@dataclass
class Response:
    status: int
    body: Any
    headers: dict[str, str] | None = None
    delay_s: float = 0.0


class FakeServer:
    """Subclasses answer in `handle`; tests read `requests`."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> FakeServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name=type(self).__name__, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)

    def handle(self, request: RecordedRequest) -> Response:
        raise NotImplementedError


def _handler_for(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # replies are small: don't hold them ~40 ms for an ACK
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect

        def do_POST(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            request = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=_json_or_none(raw),
            )
            server.record(request)
            response = server.handle(request)
            if response.delay_s:
                threading.Event().wait(response.delay_s)
            self._send(response)

        def _send(self, response: Response) -> None:
            payload = json.dumps(response.body).encode()
            try:
                self.send_response(response.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in (response.headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                pass

        def log_message(self, format: str, *args: object) -> None:  # quiet test output
            pass

    return Handler


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None
