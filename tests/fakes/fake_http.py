"""A local HTTP server for the fake model providers: records every request, answers through `handle`.

Faults are injected ahead of the normal replies (`inject`): the next requests get them, in order,
then the server answers normally again (a retry after a 429 gets the queued reply):

    server.inject(Fault.error(429, retry_after="1"))     # the provider's error body and status
    server.inject(Fault.hang())                          # accept, read the request, never answer
    server.inject(Fault.reset())                         # close the connection with a TCP reset
    server.inject(Fault.cut(at=40))                      # 40 bytes of the reply's body, then close
    server.inject(Fault.raw(b"<html>"))                  # a 200 whose body is this, verbatim
    server.inject(Fault.trickle(every_s=0.5))            # the reply one byte every half second
"""

from __future__ import annotations

import json
import select
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A hanging reply gives up after this long even if the client never goes away (no thread lingers).
HANG_MAX_S = 120.0
POLL_S = 0.05


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
    raw: bytes | None = None  # sent as the body instead of the JSON of `body`


@dataclass(frozen=True)
class Fault:
    """What goes wrong with one reply. Without `status` and `raw` the normal reply is sent, altered."""

    status: int | None = None  # the provider's error reply with this status
    headers: dict[str, str | None] = field(default_factory=dict)  # added to the reply; None removes
    raw: bytes | None = None  # the body, verbatim (200 unless `status` says otherwise)
    hang: bool = False  # read the request and never answer
    reset_before_reply: bool = False  # close with a TCP reset before any byte of the reply
    cut_at: int | None = None  # only this many bytes of the body (content-length says all), then close
    reset_after_cut: bool = False  # ... and close with a reset rather than a clean FIN
    byte_interval_s: float = 0.0  # the whole reply, one byte at a time, this far apart
    delay_s: float = 0.0

    @classmethod
    def error(
        cls, status: int, *, retry_after: str | None = None, retry_after_ms: str | None = None, **headers: str
    ) -> Fault:
        """The provider's error, asking for `retry_after` (seconds) or `retry_after_ms` instead of the
        fakes' usual 1 ms; other headers by keyword (x_should_retry="false")."""
        named: dict[str, str | None] = {name.replace("_", "-"): value for name, value in headers.items()}
        if retry_after is not None or retry_after_ms is not None:
            named |= {"retry-after": retry_after, "retry-after-ms": retry_after_ms}
        return cls(status=status, headers=named)

    @classmethod
    def never_answer(cls) -> Fault:
        return cls(hang=True)

    @classmethod
    def reset(cls) -> Fault:
        return cls(reset_before_reply=True)

    @classmethod
    def cut(cls, at: int, *, reset: bool = False) -> Fault:
        return cls(cut_at=at, reset_after_cut=reset)

    @classmethod
    def body(cls, raw: bytes | str, status: int = 200) -> Fault:
        return cls(status=status, raw=raw.encode() if isinstance(raw, str) else raw)

    @classmethod
    def trickle(cls, every_s: float) -> Fault:
        return cls(byte_interval_s=every_s)


class FakeServer:
    """Subclasses answer in `handle` (and shape their errors in `error_reply`); tests read `requests`."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.lock = threading.Lock()
        self.faults: deque[Fault] = deque()
        self._httpd: ThreadingHTTPServer | None = None
        self._stopping = threading.Event()
        self.latency_s = 0.0  # added to every reply: a provider's latency as a deployment sees it (benches)

    def start(self) -> FakeServer:
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name=type(self).__name__, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
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
            self.faults.clear()

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)

    def inject(self, *faults: Fault, times: int = 1) -> None:
        """The next requests get these faults, in order, before any normal reply."""
        with self.lock:
            for _ in range(times):
                self.faults.extend(faults)

    def next_fault(self) -> Fault | None:
        with self.lock:
            return self.faults.popleft() if self.faults else None

    def handle(self, request: RecordedRequest) -> Response:
        raise NotImplementedError

    def error_reply(self, status: int, message: str) -> Response:
        """The provider's error reply for `status`."""
        return Response(status, {"error": {"message": message}})

    def faulty_reply(self, request: RecordedRequest, fault: Fault) -> Response:
        """The reply `fault` makes of this request."""
        if fault.status is not None and fault.raw is None:
            response = self.error_reply(fault.status, f"fake error {fault.status}")
        elif fault.raw is not None:
            response = Response(fault.status or 200, None, raw=fault.raw)
        else:
            response = self.handle(request)
        headers = {**(response.headers or {}), **fault.headers}
        headers = {name: value for name, value in headers.items() if value is not None}
        return replace(response, headers=headers, delay_s=response.delay_s + fault.delay_s)


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
            fault = server.next_fault()
            if fault is not None and fault.hang:
                self._hang()
                return
            if fault is not None and fault.reset_before_reply:
                self._reset()
                return
            response = server.faulty_reply(request, fault) if fault else server.handle(request)
            delay_s = response.delay_s + server.latency_s
            if delay_s:
                server._stopping.wait(delay_s)
            try:
                self._send(response, fault or Fault())
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                self.close_connection = True

        def _send(self, response: Response, fault: Fault) -> None:
            payload = response.raw if response.raw is not None else json.dumps(response.body).encode()
            head = [f"HTTP/1.1 {response.status} {self.responses.get(response.status, ('',))[0]}"]
            head += ["content-type: application/json", f"content-length: {len(payload)}"]
            head += [f"{name}: {value}" for name, value in (response.headers or {}).items()]
            message = ("\r\n".join(head) + "\r\n\r\n").encode()
            if fault.cut_at is not None:
                self._write(message + payload[: fault.cut_at], fault.byte_interval_s)
                if fault.reset_after_cut:
                    self._reset()
                else:
                    self.close_connection = True
                return
            self._write(message + payload, fault.byte_interval_s)

        def _write(self, data: bytes, byte_interval_s: float) -> None:
            if not byte_interval_s:
                self.wfile.write(data)
                self.wfile.flush()
                return
            for index in range(len(data)):
                if server._stopping.wait(byte_interval_s if index else 0):
                    break
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()

        def _hang(self) -> None:
            """Keep the connection open without a byte until the client closes it (its timeout)."""
            ends = time.monotonic() + HANG_MAX_S
            while time.monotonic() < ends and not server._stopping.is_set():
                readable, _, _ = select.select([self.connection], [], [], POLL_S)
                try:
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        break  # the client went away
                except OSError:
                    break
            self.close_connection = True

        def _reset(self) -> None:
            # SO_LINGER with a zero timeout: close() sends RST instead of FIN.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:  # quiet test output
            pass

    return Handler


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None
