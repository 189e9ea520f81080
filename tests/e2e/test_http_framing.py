"""Broken HTTP framing on the local API, as an attacker would send it: every request gets a clear
4xx (or 501/505) with {"error": ...} and the connection closed, never a 500, a traceback, a hang or
a silently dropped connection; any method is answered as API Gateway's ANY routes would; and what
the server logs goes through the redacting logger."""

import contextlib
import json
import select
import socket
import threading
import time

import pytest
from conftest import ROOT

from gligabao.limits import LOCAL_API_MAX_HEAD_BYTES

READ_TIMEOUT = 1.0
BODY = b'{"user_id": "u1", "text": " "}'  # the remember function's 400 "text must not be empty"


@pytest.fixture(scope="module")
def local_api():
    """The local API with a short read timeout; these requests never reach the database."""
    from gligabao.local.server import make_server

    server = make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True, read_timeout=READ_TIMEOUT)
    with running(server):
        yield server


@pytest.fixture(scope="module")
def server_port(local_api):
    return local_api.server_address[1]


@pytest.fixture
def connection_timeouts(local_api, monkeypatch) -> list[float | None]:
    """The timeout the server put on the socket of each connection it accepted: what any one read
    of it may wait at most."""
    handler = local_api.RequestHandlerClass
    setup, timeouts = handler.setup, []

    def recorded(self):
        setup(self)
        timeouts.append(self.connection.gettimeout())

    monkeypatch.setattr(handler, "setup", recorded)
    return timeouts


class TickingClock:
    """The server's `time` (gligabao.local.server): each reading `tick` seconds after the one
    before, whatever the machine's load; counts its readings."""

    def __init__(self, tick: float):
        self.now, self.tick, self.readings = 1000.0, tick, 0

    def monotonic(self) -> float:
        self.readings += 1
        self.now += self.tick
        return self.now


@contextlib.contextmanager
def running(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def exchange(port: int, data: bytes, *, wait: float = 10.0) -> tuple[int, dict[str, str], bytes, float]:
    """Sends `data`, reads until the server closes: (status, headers, body, seconds)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as conn:
        conn.sendall(data)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, value in (line.split(": ", 1) for line in header_lines)}
    return int(status_line.split()[1]), headers, body, time.monotonic() - started


def post(headers: bytes, body: bytes = b"") -> bytes:
    head = b"POST /v1/gb/remember HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    return head + headers + b"\r\n" + body


FRAMING = [
    ("negative Content-Length", post(b"Content-Length: -5\r\n"), 400, "Content-Length must be a non-negative"),
    ("non-numeric Content-Length", post(b"Content-Length: 12abc\r\n"), 400, "Content-Length must be"),
    ("Content-Length headers that disagree", post(b"Content-Length: 5\r\nContent-Length: 6\r\n", b"hello!"), 400,
     "Content-Length headers disagree"),
    ("Content-Length of 10^30", post(b"Content-Length: 1" + b"0" * 30 + b"\r\n"), 413, "request body larger than"),
    ("Content-Length and Transfer-Encoding", post(b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
     b"0\r\n\r\n"), 400, "both Content-Length and Transfer-Encoding"),
    ("a transfer coding other than chunked", post(b"Transfer-Encoding: gzip\r\n"), 501, "other than chunked"),
    ("a chunk size that is not hexadecimal", post(b"Transfer-Encoding: chunked\r\n", b"zz\r\n"), 400,
     "chunk size must be hexadecimal"),
    ("a chunk not ended by CRLF", post(b"Transfer-Encoding: chunked\r\n", b"3\r\nabcXY0\r\n\r\n"), 400,
     "must end with CRLF"),
    ("a request line over the limit", b"GET /" + b"a" * LOCAL_API_MAX_HEAD_BYTES + b" HTTP/1.1\r\n\r\n", 414,
     "request line longer than 10240 bytes"),
    ("headers over the limit", b"GET /v1/gb/health HTTP/1.1\r\nX-Big: " + b"a" * LOCAL_API_MAX_HEAD_BYTES
     + b"\r\n\r\n", 431, "request line and headers longer than"),
    ("a header line over 64 KiB", b"GET /v1/gb/health HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431,
     "request line and headers longer than"),
    ("more than 100 headers", b"GET /v1/gb/health HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120))
     + b"\r\n", 431, "too many headers"),
    ("a request line of garbage", b"\x00\x01\xff garbage \x7f here\r\n\r\n", 400, "malformed request line"),
    ("an HTTP/0.9 request line", b"GET /v1/gb/health\r\n", 400, "malformed request line"),
    ("an unreadable HTTP version", b"GET /v1/gb/health HTTP/one\r\n\r\n", 400, "malformed request line"),
    ("HTTP/2.0 in the request line", b"GET /v1/gb/health HTTP/2.0\r\n\r\n", 505, "HTTP version not supported"),
    ("a method that is not an HTTP token", b"GE(T /v1/gb/health HTTP/1.1\r\nHost: localhost\r\n\r\n", 400,
     "malformed request line"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "status", "error"), [case[1:] for case in FRAMING], ids=[c[0] for c in FRAMING]
)
def test_broken_framing_is_a_clear_error_and_the_connection_is_closed(server_port, raw, status, error):
    got, headers, body, _ = exchange(server_port, raw)

    assert got == status, body
    assert set(json.loads(body)) == {"error"} and error in json.loads(body)["error"]
    assert headers["content-type"] == "application/json" and headers["connection"] == "close"
    assert b"Traceback" not in body and b"garbage" not in body  # the raw request line is never echoed


def test_a_body_shorter_than_its_content_length_is_a_408_after_the_read_timeout(
    server_port, connection_timeouts
):
    status, _, body, seconds = exchange(server_port, post(b"Content-Length: 100\r\n", b'{"user_id"'))

    assert status == 408
    assert json.loads(body) == {"error": "the request did not arrive in time"}
    # the server waited for the rest (no earlier 408), each read of it for the read timeout at most
    assert seconds >= READ_TIMEOUT and connection_timeouts == [READ_TIMEOUT]


def test_headers_that_stop_arriving_are_a_408_after_the_read_timeout(server_port, connection_timeouts):
    status, _, body, seconds = exchange(server_port, b"GET /v1/gb/health HTTP/1.1\r\nHost: localhost\r\n")

    assert status == 408 and json.loads(body) == {"error": "the request did not arrive in time"}
    assert seconds >= READ_TIMEOUT and connection_timeouts == [READ_TIMEOUT]


def test_an_idle_kept_alive_connection_is_closed_after_the_read_timeout(server_port, connection_timeouts):
    started = time.monotonic()  # before the connect: the server's clock starts when it accepts
    with socket.create_connection(("127.0.0.1", server_port), timeout=10) as conn:
        assert conn.recv(1) == b""

    assert time.monotonic() - started >= READ_TIMEOUT and connection_timeouts == [READ_TIMEOUT]


def test_a_client_trickling_its_body_is_cut_off_at_the_read_timeout(server_port, monkeypatch):
    # The server's clock reads 0.4 s later at each look: the body's start, then before each read.
    clock = TickingClock(tick=0.4)
    monkeypatch.setattr("gligabao.local.server.time", clock)
    with socket.create_connection(("127.0.0.1", server_port), timeout=10) as conn:
        conn.sendall(post(b"Content-Length: 1000\r\n"))
        sent = 0  # a byte every 10 ms until the server answers: each read succeeds, the whole never arrives
        while sent < 900 and not select.select([conn], [], [], 0.01)[0]:
            try:
                conn.sendall(b"x")
            except OSError:
                break
            sent += 1
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk

    assert reply.startswith(b"HTTP/1.1 408 ")
    assert sent < 900  # cut off while the bytes still came, not once they stopped
    # at its first look past the read timeout (1.2 s of its clock, after reads at 0.4 and 0.8 s)
    assert clock.readings == 4


@pytest.fixture(scope="module")
def patient_server_port():
    """The local API with reads that may wait a minute: a stalled request stays stalled all the test."""
    from gligabao.local.server import make_server

    with running(make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True, read_timeout=60)) as port:
        yield port


def test_a_stalled_request_does_not_hold_up_the_others(patient_server_port):
    with socket.create_connection(("127.0.0.1", patient_server_port), timeout=10) as stalled:
        stalled.sendall(post(b"Content-Length: 100\r\n"))

        well_framed = post(b"Content-Length: %d\r\nConnection: close\r\n" % len(BODY), BODY)
        status, _, body, _ = exchange(patient_server_port, well_framed)  # 10 s at most: not the stalled 60

        stalled.setblocking(False)
        with pytest.raises(BlockingIOError):  # answered while the stalled one still waits, unanswered
            stalled.recv(1)

    assert status == 400 and json.loads(body) == {"error": "text must not be empty"}


def test_a_chunked_body_is_read(server_port):
    chunked = b"%x\r\n%s\r\n%x;ext=1\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n" % (
        10,
        BODY[:10],
        len(BODY) - 10,
        BODY[10:],
    )

    status, _, body, _ = exchange(
        server_port, post(b"Transfer-Encoding: chunked\r\nConnection: close\r\n", chunked)
    )

    assert status == 400 and json.loads(body) == {"error": "text must not be empty"}


def test_a_kept_alive_connection_serves_the_next_request_after_a_well_framed_one(server_port):
    request = post(b"Content-Length: %d\r\n" % len(BODY), BODY)
    with socket.create_connection(("127.0.0.1", server_port), timeout=10) as conn:
        conn.sendall(
            request + request.replace(b"Host: localhost\r\n", b"Host: localhost\r\nConnection: close\r\n")
        )
        received = b""
        while chunk := conn.recv(65536):
            received += chunk

    assert received.count(b"HTTP/1.1 400 Bad Request") == 2


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/gb/remember", "POST"),
        ("BREW", "/v1/gb/remember", "POST"),
        ("PROPFIND", "/v1/gb/health", "GET"),
        ("TRACE", "/v1/gb/datasets/main", "DELETE"),
        ("MKCOL", "/v1/gb/artifacts/7", "DELETE, GET"),
    ],
)
def test_any_method_a_path_is_not_served_with_is_a_405_listing_the_allowed_ones(
    server_port, method, path, allowed
):
    request = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()

    status, headers, body, _ = exchange(server_port, request)

    assert status == 405 and headers["allow"] == allowed
    assert json.loads(body) == {"error": f"method {method} not allowed on {path} (allowed: {allowed})"}


def test_the_local_api_logs_refusals_and_accesses_through_the_redacting_logger(capsys):
    from gligabao.local.server import make_server

    secret = b"sk-ant-api03-" + b"s" * 24
    with running(make_server(ROOT / "template.yaml", "127.0.0.1", 0)) as port:
        exchange(port, b"GET /v1/gb/" + secret + b" HTTP/1.1 extra\r\n\r\n")
        exchange(
            port, b"GET /v1/gb/" + secret + b"?token=" + secret + b" HTTP/1.1\r\nConnection: close\r\n\r\n"
        )

    logged = capsys.readouterr()
    lines = [json.loads(line) for line in logged.out.splitlines() if line.startswith("{")]
    assert secret.decode() not in logged.out + logged.err
    assert any(line["message"].startswith("local API refused a request: 400") for line in lines)
    assert any(line["message"] == "GET /v1/gb/[REDACTED] 404" for line in lines)
    assert logged.err == ""
