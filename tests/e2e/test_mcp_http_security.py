"""`gligabao mcp --http` against the attacks on its port, over real HTTP to the running command.
The server acts with the operator's credentials on the user's memory, so what reaches its tools
reaches the API: a fake API records every request, and a refused attack must leave it empty.

- DNS rebinding: a web page whose name resolves to this machine sends the browser's requests
  with its own `Host` (and its own `Origin`). The server listens on 127.0.0.2 here, a loopback
  address the SDK does not recognise (as it does not recognise 0.0.0.0): without our settings
  it checks neither header there.
- Other callers: with GB_MCP_TOKEN set, a request without that bearer token is refused before
  the MCP layer, even inside a session another client opened; off loopback, the command will not
  start without the variable (tested without binding: it refuses first).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import httpx2
import pytest
from conftest import ROOT
from fakes.fake_http import FakeServer, RecordedRequest, Response
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = "a-long-random-token-for-the-mcp-clients"
TOKEN_VARIABLE = "GB_MCP_TOKEN"
OPEN_HOST = "127.0.0.2"  # loopback: no token needed
GUARDED_HOST = "127.0.0.1"
MCP_ACCEPT = {"accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "a web page", "version": "1"},
    },
}
REMEMBER_CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "remember", "arguments": {"text": "Alice works at Acme."}},
}


class FakeApi(FakeServer):
    """The gligabao API as far as `remember` needs it: every request recorded."""

    def handle(self, request: RecordedRequest) -> Response:
        if request.method == "POST" and request.path == "/v1/gb/remember":
            return Response(
                200,
                {
                    "user_id": "u1",
                    "dataset": "main",
                    "kind": "knowledge",
                    "artifact_id": 1,
                    "valid_at": "2025-01-31T09:00:00Z",
                    "created_at": "2025-01-31T09:00:01Z",
                    "entities": [],
                    "edges": [],
                    "superseded": [],
                    "invalidated_edges": [],
                    "embedded_entities": 0,
                    "embedded_edges": 0,
                    "remember_run_id": 1,
                    "chunk_count": 0,
                    "chunks": [],
                },
            )
        return Response(404, {"error": f"no route {request.path}"})


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def mcp_args(api_url: str, host: str, port: int) -> list[str]:
    return [
        sys.executable,
        *("-m", "gligabao.local.cli", "mcp", "--api", api_url, "--user-id", "u1"),
        *("--http", "--host", host, "--port", str(port)),
    ]


def command_env(**variables: str) -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT / "layers" / "core"), **variables}


@contextmanager
def running_mcp(api_url: str, host: str, **variables: str) -> Iterator[str]:
    """`gligabao mcp --http` on a free port of `host`; its /mcp URL."""
    port = free_port(host)
    server = subprocess.Popen(
        mcp_args(api_url, host, port), env=command_env(**variables), stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "gligabao mcp --http exited"
                assert time.monotonic() < deadline, "gligabao mcp --http did not listen"
                time.sleep(0.2)
        yield f"http://{host}:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeApi]:
    api = FakeApi().start()
    yield api
    api.stop()


@pytest.fixture
def upstream(fake_api: FakeApi) -> FakeApi:
    fake_api.reset()
    return fake_api


@pytest.fixture(scope="module")
def open_mcp(fake_api: FakeApi) -> Iterator[str]:
    """On a loopback address, without a token."""
    with running_mcp(fake_api.url, OPEN_HOST) as url:
        yield url


@pytest.fixture(scope="module")
def guarded_mcp(fake_api: FakeApi) -> Iterator[str]:
    """On 127.0.0.1 with GB_MCP_TOKEN set: the token is then required there too."""
    with running_mcp(fake_api.url, GUARDED_HOST, **{TOKEN_VARIABLE: TOKEN}) as url:
        yield url


def post(url: str, body: dict, **headers: str) -> httpx2.Response:
    with httpx2.Client(timeout=30) as http:
        return http.post(url, json=body, headers={**MCP_ACCEPT, **headers})


def authority(url: str) -> str:
    return httpx2.URL(url).netloc.decode()


def test_a_rebound_name_is_refused_whatever_it_asks(open_mcp, upstream):
    port = httpx2.URL(open_mcp).port

    for foreign in (f"attacker.example:{port}", "attacker.example", f"localhost.attacker.example:{port}"):
        refused = post(open_mcp, INITIALIZE, host=foreign)
        assert refused.status_code == 421, foreign
    own = post(open_mcp, INITIALIZE, host=authority(open_mcp))

    assert own.status_code == 200
    assert upstream.requests == []


def test_a_page_of_another_origin_is_refused(open_mcp, upstream):
    for foreign in ("http://attacker.example", "http://localhost:6274", f"https://{authority(open_mcp)}"):
        refused = post(open_mcp, INITIALIZE, origin=foreign)
        assert refused.status_code == 403, foreign
    same_origin = post(open_mcp, INITIALIZE, origin=f"http://{authority(open_mcp)}")

    assert same_origin.status_code == 200
    assert upstream.requests == []


def test_a_host_and_an_origin_the_operator_allows_are_accepted(fake_api, upstream):
    allowed = {
        "GB_MCP_ALLOWED_HOSTS": "mcp.lan:9000, localhost:9001",
        "GB_MCP_ALLOWED_ORIGINS": "http://localhost:6274",
    }
    with running_mcp(fake_api.url, OPEN_HOST, **allowed) as url:
        published = post(url, INITIALIZE, host="localhost:9001", origin="http://localhost:6274")
        lan = post(url, INITIALIZE, host="mcp.lan:9000", origin="https://mcp.lan:9000")
        other = post(url, INITIALIZE, host="mcp.lan:9001")

    assert (published.status_code, lan.status_code, other.status_code) == (200, 200, 421)


def test_with_a_token_set_a_request_without_it_gets_a_401_and_reaches_nothing(guarded_mcp, upstream):
    bearer = f"Bearer {TOKEN}"
    opened = post(guarded_mcp, INITIALIZE, authorization=bearer)
    session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(guarded_mcp, initialized, authorization=bearer, **session).status_code == 202

    for authorization in (None, "Bearer wrong", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer"):
        headers = {**session, **({"authorization": authorization} if authorization else {})}
        refused = post(guarded_mcp, REMEMBER_CALL, **headers)
        assert refused.status_code == 401, authorization
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert TOKEN_VARIABLE in refused.json()["error"]
    assert post(guarded_mcp, INITIALIZE).status_code == 401

    assert upstream.requests == []


def test_with_the_token_the_tools_work_and_the_token_stays_with_the_server(guarded_mcp, upstream):
    async def session():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with http, Client(streamable_http_client(guarded_mcp, http_client=http)) as client:
            tools = (await client.list_tools()).tools
            stored = await client.call_tool("remember", {"text": "Alice works at Acme."})
            return tools, stored

    tools, stored = anyio.run(session)

    assert {tool.name for tool in tools} == {"remember", "query", "search", "correct", "forget", "session"}
    assert not stored.is_error and "Remembered as artifact 1" in stored.content[0].text
    (call,) = upstream.requests
    assert (call.method, call.path) == ("POST", "/v1/gb/remember")
    assert call.body["user_id"] == "u1" and call.body["text"] == "Alice works at Acme."
    assert TOKEN not in json.dumps(call.headers)  # the MCP clients' token is not the API's


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "mcp.example.com"])
def test_off_loopback_the_command_refuses_to_start_without_the_token(host):
    finished = subprocess.run(
        mcp_args("http://127.0.0.1:9", host, 8000),
        env=command_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert finished.returncode == 2
    assert TOKEN_VARIABLE in finished.stderr and f"--host {host}" in finished.stderr
