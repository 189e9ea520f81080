"""The console of `gligabao serve`: one short line a request (method, path, status, duration, and
for remember and query their counts and tokens; never a text, a user or a key), warnings and errors
as short lines, and nothing else; `--log-format json` keeps the Lambda's JSON lines and EMF
metrics. A client that goes away mid-reply leaves no traceback (serve's and the explorer's)."""

from __future__ import annotations

import json
import logging
import re
import signal
import socket
import struct
import sys
import time

import pytest
from fakes.fixtures import ANTHROPIC_TEST_KEY, OPENAI_TEST_KEY
from http_client import LocalApiClient
from test_serve_lifecycle import Running, command_env, free_port, gligabao, serving

from gligabao.observability.logging import ConsoleFormatter

STAMP = r"\d\d:\d\d:\d\d "
ALICE = {"user_id": "u1", "text": "Alice works at Acme."}
QUESTION = {"user_id": "u1", "query": "Where does Alice work?"}


@pytest.fixture
def served_env(database_url, admin_database_url, models):
    """The variables of a serve on the test database (emptied) and the fake providers."""
    fake_anthropic, fake_openai = models
    return {
        "DATABASE_URL": database_url,
        "GB_MIGRATION_DATABASE_URL": admin_database_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_TEST_KEY,
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "OPENAI_API_KEY": OPENAI_TEST_KEY,
        "OPENAI_BASE_URL": f"{fake_openai.url}/v1",  # the openai SDK's base URL includes the version
    }


def lines_after(served: Running, count: int, expected: int, timeout: float = 10) -> list[str]:
    """The stdout lines after the first `count`, once there are `expected` of them (and a moment
    more, for a line too many to show)."""
    deadline = time.monotonic() + timeout
    while len(served.out) < count + expected and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    return served.out[count:]


@pytest.mark.parametrize("workers", ["0", "1"])
def test_each_request_is_one_line_with_its_figures_and_nothing_else(workers, served_env, db, tmp_path):
    with serving(tmp_path, "--workers", workers, **served_env) as served:
        api = LocalApiClient(f"http://127.0.0.1:{served.port}")
        before = len(served.out)
        assert api.post("/v1/gb/remember", ALICE).status == 200
        assert api.post("/v1/gb/query", QUESTION).status == 200
        assert api.get("/v1/gb/datasets?user_id=u1").status == 200

        lines = lines_after(served, before, 3)
        assert served.stop(signal.SIGTERM) == 0

    assert len(lines) == 3, lines
    assert re.fullmatch(
        STAMP + r"POST /v1/gb/remember 200 \d+ ms: 2 new entities, 1 new edge, \d+ tokens", lines[0]
    )
    assert re.fullmatch(
        STAMP + r"POST /v1/gb/query 200 \d+ ms: \d+ entit(y|ies), \d+ edges?, \d+ passages?, \d+ tokens",
        lines[1],
    )
    assert re.fullmatch(STAMP + r"GET /v1/gb/datasets 200 \d+ ms", lines[2])  # never the query string
    everything = "\n".join(served.out + served.err)
    for private in ("Alice", "Acme", "u1", ANTHROPIC_TEST_KEY, OPENAI_TEST_KEY):
        assert private not in everything
    assert not any(line.startswith("{") for line in served.out)
    assert served.err == []


def test_a_refused_request_and_a_refused_body_are_one_line_each_with_the_reason(served_env, db, tmp_path):
    with serving(tmp_path, "--workers", "0", **served_env) as served:
        api = LocalApiClient(f"http://127.0.0.1:{served.port}")
        before = len(served.out)
        assert api.post("/v1/gb/remember", raw=b"{not json").status == 400
        assert api.post("/v1/gb/remember", ALICE, headers={"Host": "rebound.example"}).status == 403

        lines = lines_after(served, before, 2)
        assert served.stop(signal.SIGTERM) == 0

    assert len(lines) == 2, lines
    assert re.fullmatch(STAMP + r"POST /v1/gb/remember 400 \d+ ms: .+", lines[0]), lines
    assert re.fullmatch(STAMP + r"POST /v1/gb/remember 403 \d+ ms: .*Host.*", lines[1]), lines


def test_log_format_json_keeps_the_json_log_lines_and_the_emf_metrics(served_env, db, tmp_path):
    with serving(tmp_path, "--workers", "0", "--log-format", "json", **served_env) as served:
        api = LocalApiClient(f"http://127.0.0.1:{served.port}")
        before = len(served.out)
        assert api.post("/v1/gb/remember", ALICE).status == 200

        lines = lines_after(served, before, 3)
        assert served.stop(signal.SIGTERM) == 0

    records = [json.loads(line) for line in lines if line.startswith("{")]
    event = next(record for record in records if record.get("message") == "remember.ok")
    assert event["counts"]["entities_created"] == 2 and event["user_id"] == "u1"
    metrics = next(record for record in records if "_aws" in record)
    assert metrics["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "gligabao" and metrics[
        "EntitiesCreated"
    ] == [2.0]
    assert any(record.get("message") == "POST /v1/gb/remember 200" for record in records)


def reset_mid_reply(port: int, request: bytes, times: int = 5) -> None:
    """Send `request` and close the connection with a reset at once, before the reply is read."""
    for _ in range(times):
        client = socket.create_connection(("127.0.0.1", port))
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.sendall(request)
        client.close()
    time.sleep(1)


def test_a_client_that_goes_away_mid_reply_leaves_no_traceback_in_serve(served_env, db, tmp_path):
    with serving(tmp_path, "--workers", "0", **served_env) as served:
        host = f"127.0.0.1:{served.port}"
        reset_mid_reply(served.port, f"GET /v1/gb/openapi.json HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        assert LocalApiClient(f"http://{host}").get("/v1/gb/health").status == 200  # still serving
        assert served.stop(signal.SIGTERM) == 0

    assert served.err == []
    started, stopped = served.out[:2], served.out[-1]  # listening, providers; the stop line
    assert [line.split(" ")[0] for line in started] == ["gligabao", "providers:"]
    assert stopped.startswith("gligabao serve: stopped")
    assert all(re.match(STAMP + r"GET /v1/gb/", line) for line in served.out[2:-1]), served.out


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_explorer_stops_on_a_signal_even_when_it_started_with_sigint_ignored(tmp_path, stop):
    """A shell's background job (`gligabao explore &`) starts with SIGINT ignored: `kill -INT`, or
    `kill`, stops it as they stop serve (it ran on until killed)."""
    port = free_port()
    explorer = Running(
        gligabao("explore", "--port", str(port)),
        command_env(tmp_path),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        explorer.wait_for_line("gligabao explorer on")
        assert explorer.stop(stop, timeout=20) == 0
    finally:
        explorer.kill()


def test_a_client_that_goes_away_mid_reply_leaves_no_traceback_in_the_explorer(tmp_path):
    port = free_port()
    explorer = Running(gligabao("explore", "--port", str(port)), command_env(tmp_path))
    try:
        explorer.wait_for_line("gligabao explorer on")
        reset_mid_reply(port, f"GET /static/explorer.js HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert explorer.stop(signal.SIGINT) == 0
    finally:
        explorer.kill()

    assert not any("Traceback" in line or "Error" in line for line in explorer.err), explorer.err


def test_a_console_line_is_one_line_and_keeps_no_secret():
    try:
        raise ConnectionError("cannot reach postgresql://gligabao:hunter2-secret@db.local/gb\nsecond line")
    except ConnectionError:
        record = logging.LogRecord(
            "gligabao",
            logging.WARNING,
            __file__,
            1,
            "provider said %s",
            ("key sk-ant-api03-abcdefghijklmnop",),
            sys.exc_info(),
        )

    line = ConsoleFormatter().format(record)

    assert re.fullmatch(STAMP + r"warning: provider said key \[REDACTED\] \(ConnectionError: .*\)", line), (
        line
    )
    assert "hunter2" not in line and "sk-ant-api03" not in line and "second line" not in line
