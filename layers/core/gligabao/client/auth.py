"""How the client proves who it is, as the API is deployed (template parameter AuthMode):

* `SigV4()` for AuthMode `iam`: every request signed with the caller's AWS credentials (botocore's
  chain: environment, profile, SSO, instance or task role), service `execute-api`, the region read
  from the URL (`https://ID.execute-api.REGION.amazonaws.com`) or the session's;
* `BearerToken(token)` for AuthMode `jwt`: `Authorization: Bearer <token>` (a string, or a
  callable returning a fresh one per request);
* nothing (`auth=None`) for the local API (`gligabao serve`), which checks no signature.

Both are `httpx2.Auth` flows: each attempt of a retried request is signed anew.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from typing import Any

import httpx2

from gligabao.client.errors import GligabaoError

EXECUTE_API_SERVICE = "execute-api"
_EXECUTE_API_HOST = re.compile(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
# Headers copied from botocore's signed request onto the one sent.
_SIGNATURE_HEADERS = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")


class BearerToken(httpx2.Auth):
    """`Authorization: Bearer <token>`: a JWT the API's authorizer accepts (AuthMode jwt)."""

    def __init__(self, token: str | Callable[[], str]):
        self._token = token

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        token = self._token() if callable(self._token) else self._token
        request.headers["Authorization"] = f"Bearer {token}"
        yield request

    def __repr__(self) -> str:
        return "BearerToken(***)"


def region_of_url(url: str) -> str | None:
    """The region of an execute-api URL (`https://abc123.execute-api.eu-west-1.amazonaws.com`)."""
    match = _EXECUTE_API_HOST.search(httpx2.URL(url).host)
    return match.group(1) if match else None


class SigV4(httpx2.Auth):
    """AWS Signature Version 4 through botocore (AuthMode iam).

    `credentials`: anything with `access_key`, `secret_key` and `token` (botocore's or boto3's
    credentials), default the chain of `session` (a boto3 or botocore session; default a new
    botocore session). `region`: default the URL's (execute-api host), else the session's.
    """

    requires_request_body = True  # the signature covers the body's hash

    def __init__(
        self,
        region: str | None = None,
        *,
        credentials: Any = None,
        session: Any = None,
        service: str = EXECUTE_API_SERVICE,
    ):
        self.region = region
        self.service = service
        self._credentials = credentials
        self._session = session

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        # Only the host is signed (with the date and the body's hash): a proxy that rewrites another
        # header (Connection, Accept-Encoding) cannot break the signature.
        signed = AWSRequest(
            method=request.method,
            url=str(request.url),
            data=request.content,
            headers={"host": request.headers["host"]},
        )
        SigV4Auth(self._frozen_credentials(), self.service, self._region_for(request.url)).add_auth(signed)
        for name in _SIGNATURE_HEADERS:
            if name in signed.headers:
                request.headers[name] = signed.headers[name]
        yield request

    def _botocore_session(self) -> Any:
        if self._session is None:
            import botocore.session

            self._session = botocore.session.Session()
        # a boto3 Session wraps a botocore one
        return getattr(self._session, "_session", self._session)

    def _frozen_credentials(self) -> Any:
        credentials = self._credentials or self._botocore_session().get_credentials()
        if credentials is None:
            raise GligabaoError(
                "SigV4: no AWS credentials found (environment, profile, SSO or role); pass credentials="
            )
        # refreshable credentials (a role's) give one consistent key, secret and token per request
        return (
            credentials.get_frozen_credentials()
            if hasattr(credentials, "get_frozen_credentials")
            else credentials
        )

    def _region_for(self, url: httpx2.URL) -> str:
        if self.region is None:
            self.region = region_of_url(str(url)) or self._botocore_session().get_config_variable("region")
        if not self.region:
            raise GligabaoError(
                f"SigV4: no region in the URL ({url.host}) nor in the AWS configuration; pass SigV4(region=...)"
            )
        return self.region

    def __repr__(self) -> str:
        return f"SigV4(region={self.region!r}, service={self.service!r})"
