"""Web pages cannot use the local API: a page of another site (a cross-site form or fetch) or a DNS
name rebound to 127.0.0.1 gets a refusal before any function runs, and nothing is stored, read or
deleted; curl, the Python client and the explorer's proxy, which send no Origin, keep working."""

import json
import socket
import threading
from urllib.parse import urlsplit

import pytest
from conftest import ROOT, count_rows
from http_client import LocalApiClient
from remember_helpers import remember

from gligabao.local.server import make_server

ALICE = b'{"user_id": "u1", "text": "Alice works at Acme."}'


def raw_request(
    api, method: str, target: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict]:
    """One request over a socket, its headers exactly as given (no client adds or fixes any)."""
    address = urlsplit(api.base_url)
    lines = [f"{method} {target} HTTP/1.1", *(f"{name}: {value}" for name, value in headers.items())]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join([*lines, "Connection: close"]) + "\r\n\r\n").encode("latin-1")
    with socket.create_connection((address.hostname, address.port), timeout=60) as conn:
        conn.sendall(head + body)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


def own_host(api) -> str:
    return urlsplit(api.base_url).netloc


def stored(db) -> dict[str, int]:
    return {
        table: count_rows(db, table) for table in ("gb_datasets", "gb_artifacts", "gb_entities", "gb_edges")
    }


NOTHING_STORED = {"gb_datasets": 0, "gb_artifacts": 0, "gb_entities": 0, "gb_edges": 0}


def test_a_cross_site_text_plain_post_stores_nothing(api, db, models):
    """<form enctype="text/plain"> or fetch(..., {mode: "no-cors"}) from another site: a "simple"
    request, sent without a CORS preflight."""
    fake_anthropic, fake_openai = models
    page = {"Host": own_host(api), "Origin": "https://attacker.example", "Content-Type": "text/plain"}

    status, body = raw_request(api, "POST", "/v1/gb/remember", page, ALICE)

    assert status == 403 and "Origin" in body["error"]
    assert stored(db) == NOTHING_STORED
    assert fake_anthropic.messages == [] and fake_openai.embedding_requests == []


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
def test_a_body_not_sent_as_json_is_a_415_that_stores_nothing(api, db, models, content_type):
    """A browser that sends no Origin (or a page that hides it) still cannot POST JSON as a simple request."""
    headers = {"Host": own_host(api)} | ({"Content-Type": content_type} if content_type else {})

    status, body = raw_request(api, "POST", "/v1/gb/remember", headers, ALICE)

    assert status == 415 and "application/json" in body["error"]
    assert stored(db) == NOTHING_STORED


def test_a_json_body_with_a_charset_is_served(api, db, models):
    headers = {"Host": own_host(api), "Content-Type": "Application/JSON; charset=utf-8"}

    status, body = raw_request(api, "POST", "/v1/gb/remember", headers, ALICE)

    assert status == 200, body
    assert stored(db)["gb_artifacts"] == 1


def test_a_rebound_dns_name_reads_nothing_and_deletes_nothing(api, db, models):
    """A page of rebind.attacker.example, its name now resolving to 127.0.0.1: same-origin for the
    browser, so it could read the answers; the Host it sends gives it away."""
    alice = next(
        entity for entity in remember(api, "Alice works at Acme.")["entities"] if entity["name"] == "Alice"
    )
    rebound = {"Host": f"rebind.attacker.example:{urlsplit(api.base_url).port}"}

    read_status, read = raw_request(api, "GET", "/v1/gb/graph?user_id=u1&dataset=main", rebound)
    delete_status, _ = raw_request(api, "DELETE", f"/v1/gb/entities/{alice['id']}?user_id=u1", rebound)
    same_origin_post = rebound | {"Origin": f"http://{rebound['Host']}", "Content-Type": "application/json"}
    post_status, _ = raw_request(api, "POST", "/v1/gb/remember", same_origin_post, ALICE)

    assert (read_status, delete_status, post_status) == (403, 403, 403)
    assert "Host" in read["error"] and "Alice" not in json.dumps(read)
    assert api.get(f"/v1/gb/entities/{alice['id']}?user_id=u1").status == 200
    assert stored(db)["gb_artifacts"] == 1


@pytest.mark.parametrize(
    "origin",
    [
        "http://attacker.example",
        "https://127.0.0.1.attacker.example",
        "null",
        "file://",
        "http://localhost@x.example",
    ],
)
def test_a_page_of_another_origin_is_refused_even_for_a_read(api, db, origin):
    status, body = raw_request(
        api, "GET", "/v1/gb/datasets?user_id=u1", {"Host": own_host(api), "Origin": origin}
    )

    assert status == 403 and "Origin" in body["error"]


@pytest.mark.parametrize(
    "host", ["attacker.example", "localhost.attacker.example", "127.0.0.1.nip.io", "127.0.0.1:80@x", "[::2]"]
)
def test_a_host_not_of_this_machine_is_refused(api, db, host):
    status, body = raw_request(api, "GET", "/v1/gb/health", {"Host": host})

    assert status == 403 and "Host" in body["error"]


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("localhost", None),
        ("127.0.0.1:7878", None),
        ("127.1.2.3", None),
        ("[::1]:7878", None),
        ("LOCALHOST:1", "http://localhost:5173"),
        ("127.0.0.1", "https://127.0.0.1"),
        ("[::1]", "http://[::1]:8080"),
    ],
)
def test_a_local_host_and_a_local_page_are_served(api, db, host, origin):
    headers = {"Host": host} | ({"Origin": origin} if origin else {})

    status, body = raw_request(api, "GET", "/v1/gb/datasets?user_id=u1", headers)

    assert (status, body) == (200, {"datasets": []})


def test_curl_s_requests_are_served(api, db):
    """No Origin, the Host it was given: what curl and the Python client send."""
    status, body = raw_request(
        api, "GET", "/v1/gb/health", {"Host": own_host(api), "User-Agent": "curl/8.5.0"}
    )

    assert status == 200 and body["status"] == "ok"


def test_a_host_allowed_by_the_command_is_served(db):
    """`gligabao serve --host 0.0.0.0 --allowed-host gb.lan`: the name the others reach it by."""
    server = make_server(ROOT / "template.yaml", "127.0.0.1", 0, quiet=True, allowed_hosts=["gb.lan"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = LocalApiClient(f"http://127.0.0.1:{server.server_address[1]}")
    try:
        allowed = raw_request(api, "GET", "/v1/gb/datasets?user_id=u1", {"Host": "gb.lan:7878"})
        other = raw_request(api, "GET", "/v1/gb/datasets?user_id=u1", {"Host": "gb.lan.attacker.example"})
        page = raw_request(
            api, "GET", "/v1/gb/datasets?user_id=u1", {"Host": "gb.lan", "Origin": "http://gb.lan"}
        )
    finally:
        server.shutdown()
        server.server_close()

    assert (allowed, other[0], page[0]) == ((200, {"datasets": []}), 403, 200)
