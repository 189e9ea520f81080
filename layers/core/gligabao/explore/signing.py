"""How the explorer's proxy authenticates its calls of the API: SigV4 with the user's AWS
credentials (botocore's chain: environment, profile, SSO, instance role) for an IAM-authorized
API, a bearer token read from a file for a JWT-authorized one, or nothing for the local one. The
browser never sees a key or a token: only the proxy signs."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

# An API Gateway endpoint names its region: https://abc123.execute-api.eu-west-1.amazonaws.com
_EXECUTE_API_HOST = re.compile(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$")

# (method, url, headers, body) -> the headers to send
Signer = Callable[[str, str, dict[str, str], bytes | None], dict[str, str]]


class SigningUnavailable(Exception):
    """No credentials or no region: the explorer cannot sign, and says why."""


def region_of(api_url: str) -> str | None:
    match = _EXECUTE_API_HOST.search(urlsplit(api_url).hostname or "")
    return match.group(1) if match else None


def wants_signing(api_url: str) -> bool:
    """`--sign auto`: sign for an API Gateway endpoint, not for a local or custom one."""
    return region_of(api_url) is not None


def sigv4_signer(
    api_url: str, region: str | None = None, profile: str | None = None, credentials=None
) -> Signer:
    """A signer for execute-api in `region` (else the URL's, else the profile's), with
    `credentials` (botocore's) or those botocore's chain finds."""
    import botocore.session
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.exceptions import BotoCoreError

    try:
        session = botocore.session.Session(profile=profile)
        credentials = credentials or session.get_credentials()
        region = region or region_of(api_url) or session.get_config_variable("region")
    except BotoCoreError as error:
        raise SigningUnavailable(f"AWS credentials could not be read: {error}") from None
    if credentials is None:
        raise SigningUnavailable(
            "no AWS credentials found (environment, ~/.aws, SSO or instance role) to sign the API's calls"
        )
    if not region:
        raise SigningUnavailable("no AWS region: give --region (the API's URL does not name one)")

    def sign(method: str, url: str, headers: dict[str, str], body: bytes | None) -> dict[str, str]:
        request = AWSRequest(method=method, url=url, data=body or b"", headers=headers)
        # Refreshable credentials (SSO, assumed roles) renew themselves on each frozen read.
        SigV4Auth(credentials.get_frozen_credentials(), "execute-api", region).add_auth(request)
        return dict(request.headers.items())

    return sign


def bearer_signer(token_file: Path) -> Signer:
    """`Authorization: Bearer <token>` with the file's token, read again for every call, so a
    token refreshed into the file is used at once."""

    def read() -> str:
        try:
            token = token_file.read_text().strip()
        except OSError as error:
            raise SigningUnavailable(
                f"the token file {token_file} cannot be read: {error.strerror}"
            ) from None
        if not token:
            raise SigningUnavailable(f"the token file {token_file} is empty")
        return token

    read()  # a missing or empty file is said at start, not at the first call

    def sign(method: str, url: str, headers: dict[str, str], body: bytes | None) -> dict[str, str]:
        return {**headers, "authorization": f"Bearer {read()}"}

    return sign
