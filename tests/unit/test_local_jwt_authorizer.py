"""The local API's JWT authorizer refuses what API Gateway's refuses, answers as it answers
(401 {"message":"Unauthorized"} with a www-authenticate reason) and passes the claims on."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from jwt_keys import AUDIENCE, ISSUER, SigningKey, write_jwks

from gligabao.local.jwt_authorizer import JwtAuthorizer, authorizer_from_settings
from gligabao.settings import Settings


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey("key-1")


@pytest.fixture(scope="module")
def impostor() -> SigningKey:
    """Another key pair claiming the same kid: its signatures must not verify."""
    return SigningKey("key-1")


@pytest.fixture
def authorizer(key, tmp_path) -> JwtAuthorizer:
    return JwtAuthorizer(ISSUER, [AUDIENCE, "other-client"], str(write_jwks(tmp_path / "jwks.json", key)))


def request(authorization: str | None) -> dict:
    headers = {"host": "localhost"} if authorization is None else {"authorization": authorization}
    return {"headers": headers, "requestContext": {"requestId": "r1"}}


def test_a_valid_token_passes_with_its_claims_as_strings(authorizer, key):
    event = request(f"Bearer {key.token('u1', scope='memory/read memory/write')}")

    assert authorizer(event) is None
    passed = event["requestContext"]["authorizer"]["jwt"]
    assert passed["claims"]["sub"] == "u1"
    assert passed["claims"]["iss"] == ISSUER
    assert passed["claims"]["exp"].isdigit()
    assert passed["scopes"] == ["memory/read", "memory/write"]


def test_the_bearer_prefix_is_optional(authorizer, key):
    assert authorizer(request(key.token("u1"))) is None


def test_an_access_token_without_aud_is_checked_by_its_client_id(authorizer, key):
    assert authorizer(request(f"Bearer {key.token('u1', aud=None, client_id=AUDIENCE)}")) is None
    assert authorizer(request(f"Bearer {key.token('u1', aud=None, client_id='stranger')}")) is not None


def test_any_of_the_token_audiences_may_match(authorizer, key):
    assert authorizer(request(f"Bearer {key.token('u1', aud=['stranger', AUDIENCE])}")) is None


def _refusals(key: SigningKey, impostor: SigningKey) -> dict[str, tuple[str | None, str]]:
    now = int(time.time())
    return {
        "missing": (None, "no token"),
        "empty": ("Bearer ", "no token"),
        "not a JWT": ("Bearer abc.def", "not valid"),
        "expired": (f"Bearer {key.token('u1', expires_in=-5)}", "expired"),
        "not valid yet": (f"Bearer {key.token('u1', nbf=now + 600)}", "not valid yet"),
        "issued in the future": (f"Bearer {key.token('u1', iat=now + 600)}", "not valid yet"),
        "without exp": (f"Bearer {key.token('u1', exp=None)}", "not valid"),
        "signed by another key": (f"Bearer {impostor.token('u1')}", "not valid"),
        "unknown kid": (f"Bearer {SigningKey('key-2').token('u1')}", "not valid"),
        "wrong issuer": (f"Bearer {key.token('u1', iss='https://elsewhere.test')}", "issuer"),
        "wrong audience": (f"Bearer {key.token('u1', aud='stranger')}", "audience"),
        "no audience": (f"Bearer {key.token('u1', aud=None)}", "audience"),
        "HMAC with the public key": (f"Bearer {_hmac_token(key)}", "not valid"),
        "unsigned": (f"Bearer {_unsigned_token()}", "not valid"),
    }


REFUSALS = [
    "missing",
    "empty",
    "not a JWT",
    "expired",
    "not valid yet",
    "issued in the future",
    "without exp",
    "signed by another key",
    "unknown kid",
    "wrong issuer",
    "wrong audience",
    "no audience",
    "HMAC with the public key",
    "unsigned",
]


@pytest.mark.parametrize("case", REFUSALS)
def test_an_invalid_token_is_refused_as_api_gateway_refuses_it(authorizer, key, impostor, case):
    refusals = _refusals(key, impostor)
    assert set(refusals) == set(REFUSALS)
    authorization, reason = refusals[case]
    event = request(authorization)

    status, headers, body = authorizer(event)

    assert status == 401
    assert json.loads(body) == {"message": "Unauthorized"}
    assert headers["www-authenticate"].startswith('Bearer scope="" error="invalid_token"')
    assert reason in headers["www-authenticate"]
    assert "authorizer" not in event["requestContext"]


def _hmac_token(key: SigningKey) -> str:
    """The algorithm-confusion attack: HS256 keyed with the public key the JWKS publishes."""
    public = key.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"alg": "HS256", "typ": "JWT", "kid": key.kid}
    payload = {"sub": "u1", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 300}
    signing_input = f"{_b64(header)}.{_b64(payload)}".encode()
    signature = hmac.new(public, signing_input, hashlib.sha256).digest()
    return f"{signing_input.decode()}.{jwt.utils.base64url_encode(signature).decode()}"


def _unsigned_token() -> str:
    payload = {"sub": "u1", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 300}
    return f"{_b64({'alg': 'none', 'kid': 'key-1'})}.{_b64(payload)}."


def _b64(value: dict) -> str:
    return jwt.utils.base64url_encode(json.dumps(value).encode()).decode()


def test_the_authorizer_needs_an_issuer_an_audience_and_a_jwks(tmp_path, key):
    jwks = str(write_jwks(tmp_path / "jwks.json", key))
    for settings in (
        Settings(jwt_audience=AUDIENCE, jwks=jwks),
        Settings(jwt_issuer=ISSUER, jwt_audience=" , ", jwks=jwks),
        Settings(jwt_issuer=ISSUER, jwt_audience=AUDIENCE),
    ):
        with pytest.raises(ValueError, match="issuer, at least one audience and a JWKS"):
            authorizer_from_settings(settings)


def test_the_settings_give_the_issuer_the_audiences_and_the_jwks(tmp_path, key):
    settings = Settings(
        auth_mode="jwt", jwt_issuer=ISSUER, jwt_audience=f"a, {AUDIENCE}", jwks=str(tmp_path / "jwks.json")
    )
    write_jwks(tmp_path / "jwks.json", key)

    authorizer = authorizer_from_settings(settings)

    assert (authorizer.issuer, authorizer.audiences) == (ISSUER, ["a", AUDIENCE])
    assert authorizer(request(f"Bearer {key.token('u1')}")) is None


@pytest.mark.parametrize("content", ['{"keys": []}', "not json", '{"keys": [{"kty": "RSA"}]}'])
def test_a_jwks_file_without_a_usable_key_is_refused_at_start(tmp_path, content):
    jwks = tmp_path / "jwks.json"
    jwks.write_text(content, encoding="utf-8")

    with pytest.raises(ValueError, match="not a JWKS with a usable key"):
        JwtAuthorizer(ISSUER, [AUDIENCE], str(jwks))
