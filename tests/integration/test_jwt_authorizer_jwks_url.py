"""The local JWT authorizer fetches the JWKS from a URL, as API Gateway fetches the issuer's."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from jwt_keys import AUDIENCE, ISSUER, SigningKey

from gligabao.local.jwt_authorizer import JwtAuthorizer


@pytest.fixture
def published_key():
    """A key pair whose JWKS an HTTP server publishes; yields (key, jwks URL, requests served)."""
    key = SigningKey("url-key")
    document = json.dumps({"keys": [key.jwk()]}).encode()
    served = []

    class Jwks(BaseHTTPRequestHandler):
        def do_GET(self):
            served.append(self.path)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Jwks)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield key, f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json", served
    server.shutdown()
    server.server_close()


def test_tokens_are_checked_against_the_keys_fetched_from_the_jwks_url(published_key):
    key, url, served = published_key
    authorizer = JwtAuthorizer(ISSUER, [AUDIENCE], url)

    first = {"headers": {"authorization": f"Bearer {key.token('u1')}"}, "requestContext": {}}
    second = {"headers": {"authorization": f"Bearer {key.token('u2')}"}, "requestContext": {}}
    foreign = {
        "headers": {"authorization": f"Bearer {SigningKey('url-key').token('u1')}"},
        "requestContext": {},
    }

    assert authorizer(first) is None and authorizer(second) is None
    assert first["requestContext"]["authorizer"]["jwt"]["claims"]["sub"] == "u1"
    assert authorizer(foreign)[0] == 401
    assert served == ["/.well-known/jwks.json"]  # fetched once, then cached
