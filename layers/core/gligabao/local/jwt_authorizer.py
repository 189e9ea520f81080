"""The local API's emulation of API Gateway's JWT authorizer (`gligabao serve --auth jwt`).

As API Gateway does for an HTTP API route with a JWT authorizer whose identity source is
`$request.header.Authorization`: the token (with or without `Bearer `) must be signed with an RSA
key of the JWKS named by its `kid`, its `iss` must be the issuer, its `aud` (or, without `aud`,
its `client_id`) one of the audiences, and `exp`, `nbf` and `iat` must hold now. A request that
fails is answered here, before any function runs, exactly as API Gateway answers it:
`401 {"message":"Unauthorized"}` with a `www-authenticate` header saying why. That body is API
Gateway's, not the API's `{"error": ...}`: it is what clients meet on AWS. A request that passes
carries the token's claims in `requestContext.authorizer.jwt.claims`, as strings, like API
Gateway's payload 2.0 events.

Needs PyJWT with its crypto extra (the `local` extra); the Lambda layer never imports this module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jwt

RSA_ALGORITHMS = ["RS256", "RS384", "RS512"]  # API Gateway accepts RSA-signed tokens only
JWKS_CACHE_SECONDS = 7200  # API Gateway caches the issuer's public keys up to two hours
UNAUTHORIZED_BODY = b'{"message":"Unauthorized"}'


class Denied(Exception):
    """The token is missing or invalid; the message is the www-authenticate error_description."""


class JwtAuthorizer:
    def __init__(self, issuer: str, audiences: list[str], jwks: str):
        if not issuer or not audiences or not jwks:
            raise ValueError("the JWT authorizer needs an issuer, at least one audience and a JWKS")
        self.issuer = issuer
        self.audiences = audiences
        self._keys = _key_source(jwks)

    def __call__(self, event: dict) -> tuple[int, dict[str, str], bytes] | None:
        """Authorize one payload 2.0 event: None when it may reach the function (with the claims
        added to it), else the response API Gateway would give."""
        try:
            claims = self.claims((event.get("headers") or {}).get("authorization"))
        except Denied as denied:
            return _unauthorized(str(denied))
        authorizer = {"claims": {name: _claim_text(value) for name, value in claims.items()}}
        if isinstance(claims.get("scope"), str):
            authorizer["scopes"] = claims["scope"].split()
        event["requestContext"]["authorizer"] = {"jwt": authorizer}
        return None

    def claims(self, authorization: str | None) -> dict[str, Any]:
        """The claims of a valid token; Denied says why another is refused."""
        parts = (authorization or "").split(None, 1)
        if parts and parts[0].lower() == "bearer":
            parts = parts[1:]
        token = parts[0].strip() if parts else ""
        if not token:
            raise Denied("no token in the Authorization header")
        try:
            key = self._keys(jwt.get_unverified_header(token).get("kid"))
            claims = jwt.decode(
                token,
                key,
                algorithms=RSA_ALGORITHMS,
                issuer=self.issuer,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.ExpiredSignatureError:
            raise Denied("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise Denied("the token is not valid yet") from None
        except jwt.InvalidIssuerError:
            raise Denied("the token does not have a valid issuer") from None
        except (jwt.PyJWTError, KeyError, ValueError):
            raise Denied("the token is not valid") from None
        audience = claims.get("aud", claims.get("client_id"))  # API Gateway reads client_id without aud
        audiences = audience if isinstance(audience, list) else [audience]
        if not any(isinstance(a, str) and a in self.audiences for a in audiences):
            raise Denied("the token does not have a valid audience")
        return claims


def _key_source(jwks: str):
    """kid -> the signing key: from a JWKS file, or fetched from an http(s) URL and cached."""
    if jwks.startswith(("https://", "http://")):
        client = jwt.PyJWKClient(jwks, cache_keys=True, lifespan=JWKS_CACHE_SECONDS)
        return lambda kid: client.get_signing_key(kid).key
    try:
        keys = jwt.PyJWKSet.from_dict(json.loads(Path(jwks).read_text(encoding="utf-8")))
    except (ValueError, jwt.PyJWKSetError) as error:
        raise ValueError(f"{jwks} is not a JWKS with a usable key: {error}") from None
    return lambda kid: keys[kid].key


def _claim_text(value: Any) -> str:
    """API Gateway passes every claim as a string; a list as its items in brackets."""
    if isinstance(value, list):
        return "[" + " ".join(str(item) for item in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _unauthorized(description: str) -> tuple[int, dict[str, str], bytes]:
    challenge = f'Bearer scope="" error="invalid_token" error_description="{description}"'
    return 401, {"content-type": "application/json", "www-authenticate": challenge}, UNAUTHORIZED_BODY


def authorizer_from_settings(settings) -> JwtAuthorizer:
    """The authorizer of `gligabao serve --auth jwt`, from GB_JWT_ISSUER, GB_JWT_AUDIENCE
    (comma-separated) and GB_JWKS (or the command's options)."""
    audiences = [a.strip() for a in (settings.jwt_audience or "").split(",") if a.strip()]
    return JwtAuthorizer(settings.jwt_issuer or "", audiences, settings.jwks or "")
