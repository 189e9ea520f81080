"""The explorer's proxy calls only the API: a request target that is not a plain path under
/v1/gb/ is a 400 and nothing is forwarded, so the bearer token (or the SigV4 signature) it adds
never goes to another host; and, like the local API, it answers no rebound DNS name and no page
of another origin."""

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from gligabao.client.auth import BearerToken
from gligabao.explore.server import PAGE_HEADER, make_server

TOKEN = "token-of-the-user"
API = "http://abc123.execute-api.eu-west-1.amazonaws.com"  # no port: a target could go on its name


class _Seen(BaseHTTPRequestHandler):
    """A fake upstream that records every request it gets: the API itself, or a forward proxy
    (HTTP_PROXY) that every call of the explorer's proxy goes through, whatever host it names."""

    seen: ClassVar[list]

    def _record(self) -> None:
        self.seen.append((self.path, dict(self.headers.items())))
        body = b'{"status": "ok"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _record

    def log_message(self, format, *args) -> None:
        pass


@contextlib.contextmanager
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Seen", (_Seen,), {"seen": []}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def explorer(api_url: str, auth=None):
    server = make_server(api_url, "127.0.0.1", 0, auth)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def send(port: int, method: str, target: str, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    """One request over a socket, its target exactly as given: no client library rewrites it."""
    fields = {"Host": f"127.0.0.1:{port}", PAGE_HEADER: "1", "Connection": "close", **(headers or {})}
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(head.encode("latin-1"))
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2] or b"null")


ATTACKS = [
    "a.attacker.example://x/v1/gb/health",  # absolute-form of a made-up scheme: its path is /v1/gb/health
    "http://attacker.example/v1/gb/health",  # absolute-form
    "https://attacker.example:443/v1/gb/health?user_id=u1",
    "//attacker.example/v1/gb/health",  # a network-path reference
    "attacker.example:80",  # authority-form
    "@attacker.example/v1/gb/health",
    "/v1/gb/health\\@attacker.example",  # a backslash
    "/v1/gb\\..\\..\\health",
    "/v1/gb/../../elsewhere",  # dot segments leave the API's prefix
    "/v1/gb/%2e%2e/%2E%2E/elsewhere",
    "/v1/gb/health#fragment",
    "*",  # asterisk-form
]


@pytest.mark.parametrize("target", ATTACKS)
def test_a_target_not_a_path_of_the_api_forwards_nothing_and_the_token_goes_nowhere(monkeypatch, target):
    with upstream() as forward_proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{forward_proxy.server_address[1]}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with explorer(API, BearerToken(TOKEN)) as port:
            # The set-up sees what the proxy sends: the page's own call reaches the API, with the token.
            assert send(port, "GET", "/v1/gb/health?user_id=u1") == (200, {"status": "ok"})
            [(url, headers)] = forward_proxy.RequestHandlerClass.seen
            assert (url, headers["Authorization"]) == (f"{API}/v1/gb/health?user_id=u1", f"Bearer {TOKEN}")

            status, body = send(port, "GET", target)

        seen = forward_proxy.RequestHandlerClass.seen[1:]
    assert seen == [], f"forwarded to {seen[0][0]}, the token with it" if seen else ""
    assert status == 400 and "path" in body["error"]


def test_a_target_naming_another_host_is_not_even_sent_to_the_api():
    with upstream() as api, explorer(f"http://127.0.0.1:{api.server_address[1]}") as port:
        for target in ("//attacker.example/v1/gb/health", "http://attacker.example/v1/gb/health"):
            assert send(port, "GET", target)[0] == 400, target
        assert send(port, "GET", "/v1/gb/health")[0] == 200
        assert [path for path, _ in api.RequestHandlerClass.seen] == ["/v1/gb/health"]


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({"Host": "rebind.attacker.example:7879"}, "Host"),
        ({"Origin": "https://attacker.example"}, "Origin"),
        ({"Origin": "null"}, "Origin"),
    ],
)
def test_a_rebound_name_or_a_page_of_another_origin_cannot_use_the_proxy(headers, error):
    """A page that reached the proxy would call the API with the user's token or AWS credentials."""
    with upstream() as api, explorer(f"http://127.0.0.1:{api.server_address[1]}", BearerToken(TOKEN)) as port:
        for method in ("GET", "POST", "DELETE"):
            status, body = send(port, method, "/v1/gb/entities/1?user_id=u1", headers)
            assert status == 403 and error in body["error"], method
        status, _ = send(port, "GET", "/", headers)
        assert status == 403
        assert send(port, "POST", "/v1/gb/query", {"Origin": f"http://localhost:{port}"})[0] == 200
        assert [path for path, _ in api.RequestHandlerClass.seen] == ["/v1/gb/query"]


@pytest.mark.parametrize(
    "framing", [{"Transfer-Encoding": "chunked"}, {"Content-Length": "2x"}, {"Content-Length": "-1"}]
)
def test_a_body_framed_otherwise_than_by_one_content_length_is_a_400_and_nothing_is_forwarded(framing):
    """What the proxy cannot frame could hide a second request in the body (request smuggling)."""
    with upstream() as api, explorer(f"http://127.0.0.1:{api.server_address[1]}") as port:
        status, body = send(port, "POST", "/v1/gb/query", framing)
        assert status == 400 and "Content-Length" in body["error"]
        assert api.RequestHandlerClass.seen == []
