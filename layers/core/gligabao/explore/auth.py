"""How the explorer's proxy authenticates its calls of the API, with the Python client's own
authentication (gligabao.client.auth): SigV4 with the user's AWS credentials (botocore's chain:
environment, profile, SSO, instance role) for an IAM-authorized API, the bearer token of
GB_API_TOKEN for a JWT-authorized one, nothing for the local API. The browser never sees a key or
a token: only the proxy signs."""

from __future__ import annotations

import httpx2

from gligabao.client.auth import BearerToken, SigV4
from gligabao.client.errors import GligabaoError
from gligabao.client.options import ClientOptions, OptionError


class AuthUnavailable(Exception):
    """The proxy cannot authenticate as asked (no credentials, no region, no token): says why."""


def proxy_auth(
    api_url: str, mode: str | None = None, token: str | None = None, region: str | None = None
) -> httpx2.Auth | None:
    """The authentication of `mode` (iam, jwt or none), inferred as `gligabao mcp` infers it when
    not given: jwt with a token, iam for an execute-api URL, none otherwise. An IAM signer is tried
    once at once, so missing credentials or region are said at start, not at the first call."""
    try:
        auth = ClientOptions(api=api_url, auth=mode, token=token, region=region).authentication()
        if isinstance(auth, SigV4):
            next(auth.auth_flow(httpx2.Request("GET", api_url.rstrip("/") + "/v1/gb/health")))
    except (OptionError, GligabaoError) as error:
        raise AuthUnavailable(str(error)) from None
    return auth


def described(auth: httpx2.Auth | None) -> str:
    if isinstance(auth, SigV4):
        return f"SigV4-signed for {auth.region}"
    return "with the bearer token of GB_API_TOKEN" if isinstance(auth, BearerToken) else "unsigned"
