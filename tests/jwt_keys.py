"""RSA key pairs and the tokens they sign, for the tests of the JWT authentication: an identity
provider of our own (like a Cognito user pool) whose JWKS the local API's authorizer reads."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER = "https://idp.example.test/pool-1"
AUDIENCE = "gligabao-client"


@dataclass
class SigningKey:
    kid: str
    private_key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )

    def jwk(self) -> dict:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private_key.public_key()))
        return {**public, "kid": self.kid, "use": "sig", "alg": "RS256"}

    def token(self, subject: str | None = "u1", *, expires_in: float = 300, **claims) -> str:
        """A token of `subject` valid for `expires_in` seconds (negative: already expired); claims
        override the defaults (iss, aud, iat, exp), None removes one."""
        now = int(time.time())
        payload = {"sub": subject, "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + expires_in}
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        return jwt.encode(payload, self.private_key, algorithm="RS256", headers={"kid": self.kid})


def write_jwks(path: Path, *keys: SigningKey) -> Path:
    path.write_text(json.dumps({"keys": [key.jwk() for key in keys]}), encoding="utf-8")
    return path


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
