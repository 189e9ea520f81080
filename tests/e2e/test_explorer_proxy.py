"""The explorer's server over HTTP: it serves its page, proxies only the page's API calls, passes
the API's answers through unchanged, says which API did not answer, and signs when asked to."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from botocore.credentials import Credentials
from conftest import ROOT
from remember_helpers import remember

from gligabao.client.auth import SigV4
from gligabao.explore.server import PAGE_HEADER, make_server


@pytest.fixture
def serve():
    started = []

    def start(api_url: str, auth=None) -> int:
        server = make_server(api_url, "127.0.0.1", 0, auth)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return server.server_address[1]

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def call(port: int, method: str, path: str, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = json.dumps(body).encode() if body is not None else None
    connection.request(method, path, body=data, headers={PAGE_HEADER: "1", **(headers or {})})
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, raw


def test_the_page_and_its_files_are_served_with_a_policy_that_allows_only_themselves(serve, local_api_server):
    port = serve(local_api_server)

    status, headers, page = call(port, "GET", "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b'<canvas id="graph"' in page
    assert "script-src 'self'" in headers["content-security-policy"]
    status, headers, _ = call(port, "GET", "/static/explorer.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    for path in ("/static/nothing.js", "/elsewhere", "/static/server.py"):
        status, _, body = call(port, "GET", path)
        assert status == 404 and "error" in json.loads(body), path
    for path in ("/static/../server.py", "/static/%2e%2e/server.py", "/static/%2E/explorer.js"):
        status, _, body = call(port, "GET", path)  # a dot segment is no path of this server
        assert status == 400 and "error" in json.loads(body), path


def test_the_api_s_answers_pass_through_unchanged(serve, api, models):
    port = serve(api.base_url)
    remember(api, "Alice works at Acme.")

    status, _, body = call(port, "GET", "/v1/gb/graph?user_id=u1&dataset=main")
    assert status == 200
    assert json.loads(body) == api.get("/v1/gb/graph?user_id=u1&dataset=main").json
    status, _, body = call(port, "GET", "/v1/gb/graph?user_id=u1&dataset=nope")
    assert (status, json.loads(body)) == (404, api.get("/v1/gb/graph?user_id=u1&dataset=nope").json)
    status, _, body = call(port, "POST", "/v1/gb/query", {"user_id": "u1"})
    assert status == 400 and "query" in json.loads(body)["error"]


def test_only_the_page_s_own_calls_are_proxied(serve, api):
    """A cross-site form or a rebound DNS name cannot use the proxy (it holds the user's credentials)."""
    port = serve(api.base_url)

    status, _, body = call(port, "GET", "/v1/gb/health", headers={PAGE_HEADER: ""})
    assert status == 403 and PAGE_HEADER in json.loads(body)["error"]
    status, _, body = call(port, "GET", "/v1/gb/health", headers={"Host": "attacker.example:80"})
    assert status == 403 and "localhost" in json.loads(body)["error"]
    assert call(port, "GET", "/v1/gb/health")[0] == 200
    status, _, body = call(port, "PUT", "/v1/gb/health")  # no method but GET, POST and DELETE
    assert status == 501 and "PUT" in json.loads(body)["error"]


def test_an_api_that_does_not_answer_is_a_502_naming_it(serve):
    port = serve("http://127.0.0.1:9")

    status, _, body = call(port, "GET", "/v1/gb/datasets?user_id=u1")

    assert status == 502
    assert json.loads(body)["error"].startswith("the API at http://127.0.0.1:9 did not answer: ")


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, dict(self.headers.items())))
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args) -> None:
        pass


def test_a_signing_proxy_signs_each_call_and_the_browser_never_sees_a_key(serve):
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), type("Recorder", (_Recorder,), {"seen": []}))
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    api_url = f"http://127.0.0.1:{upstream.server_address[1]}"
    credentials = Credentials("AKIDEXAMPLE", "secret-example-key")
    try:
        port = serve(api_url, SigV4("eu-west-1", credentials=credentials))
        status, headers, body = call(port, "GET", "/v1/gb/datasets?user_id=u1")
    finally:
        upstream.shutdown()
        upstream.server_close()

    assert status == 200 and json.loads(body) == {"ok": True}
    [(path, sent)] = upstream.RequestHandlerClass.seen
    assert path == "/v1/gb/datasets?user_id=u1"
    assert sent["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in sent["Authorization"]
    assert PAGE_HEADER not in sent  # the page's marker stays between the page and its proxy
    assert b"AKIDEXAMPLE" not in body and not any("AKIDEXAMPLE" in v for v in headers.values())


def test_the_explore_command_serves_the_page_and_proxies_to_the_api(api):
    command = [sys.executable, "-m", "gligabao.local.cli", "explore", "--api", api.base_url, "--port", "0"]
    env = {name: value for name, value in os.environ.items() if not name.startswith("GB_API_")}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        line = process.stdout.readline()
        assert line.startswith("gligabao explorer on http://127.0.0.1:"), line
        assert f"(API {api.base_url}, unsigned)" in line
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        assert call(port, "GET", "/")[0] == 200
        status, _, body = call(port, "GET", "/v1/gb/datasets?user_id=u1")
        assert (status, json.loads(body)) == (200, {"datasets": []})
    finally:
        process.terminate()
        process.wait(timeout=10)
