"""What the client raises: one class per kind of failure, each carrying what the API said.

Every error body of the API is `{"error": "..."}` (API Gateway's own refusals say
`{"message": "..."}`): `ApiError.error` is that text, `ApiError.status` the HTTP status.
"""

from __future__ import annotations

import json
from collections.abc import Mapping


class GligabaoError(Exception):
    """Every error the client raises."""


class ApiConnectionError(GligabaoError):
    """The API could not be reached, or the connection broke before an answer (after the retries)."""


class ApiTimeoutError(ApiConnectionError):
    """No answer within the client's timeout (after the retries)."""


class UnexpectedResponseError(GligabaoError):
    """A success status whose body is not what the route answers (not JSON, or not its model):
    another server than gligabao's API at that URL, or a client older than the API."""


class RememberFailed(GligabaoError):
    """An asynchronous remember ended with status `failed`; `error` says why."""

    def __init__(self, artifact_id: int, error: str | None):
        super().__init__(f"artifact {artifact_id} failed: {error or 'no reason given'}")
        self.artifact_id = artifact_id
        self.error = error


class ApiError(GligabaoError):
    """The API answered with an error status."""

    def __init__(self, status: int, error: str, *, method: str, url: str, headers: Mapping[str, str]):
        super().__init__(f"{status}: {error} ({method} {url})")
        self.status = status
        self.error = error
        self.method = method
        self.url = url
        self.headers = dict(headers)

    @property
    def retry_after(self) -> float | None:
        """The seconds the API asked to wait (Retry-After), when it did."""
        return retry_after_seconds(self.headers)


class BadRequestError(ApiError):
    """400: the request is invalid (the message names the field); nothing was changed."""


class AuthenticationError(ApiError):
    """401: no valid credentials (a missing or expired bearer token, or no SigV4 signature)."""


class PermissionDeniedError(ApiError):
    """403: the credentials may not do this (another user's user_id, or an IAM policy's refusal)."""


class NotFoundError(ApiError):
    """404: no such dataset, artifact, entity or edge for this user."""

    def is_missing_dataset(self, dataset: str) -> bool:
        """Whether this is the API's 404 of `dataset` not existing for the user (nothing has been
        remembered in it yet), not of another missing thing or of a route API Gateway lacks."""
        return self.error == missing_dataset_error(dataset)


def missing_dataset_error(dataset: str) -> str:
    """The API's error text when the user has no such dataset (gligabao.memory: `NotFound`)."""
    return f"dataset {dataset!r} not found"


class ConflictError(ApiError):
    """409: an Idempotency-Key reused with another body or still running, or a chunk's id forgotten."""


class PayloadTooLargeError(ApiError):
    """413: the body or the image is larger than the API's limit."""


class RateLimitError(ApiError):
    """429: too many requests (API Gateway's throttling)."""


class InternalServerError(ApiError):
    """500, or any other 5xx not below."""


class UpstreamError(ApiError):
    """502: the LLM, the embeddings or another provider the API calls failed."""


class ServiceUnavailableError(ApiError):
    """503: a provider key or the database is missing or unreachable, or the configuration is invalid."""


class GatewayTimeoutError(ApiError):
    """504: the API did not answer within API Gateway's 29 seconds."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitError,
    500: InternalServerError,
    502: UpstreamError,
    503: ServiceUnavailableError,
    504: GatewayTimeoutError,
}

_SHOWN_TEXT_CHARS = 500  # of a body that is not the API's JSON error (a proxy's HTML page, say)


def api_error(status: int, body: bytes, *, method: str, url: str, headers: Mapping[str, str]) -> ApiError:
    """The error of a response: its class by status, its text from the body."""
    kind = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else ApiError)
    return kind(status, error_text(body) or f"HTTP {status}", method=method, url=url, headers=headers)


def error_text(body: bytes) -> str:
    """The `error` of the API's body, API Gateway's `message`, or the start of any other text."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()[:_SHOWN_TEXT_CHARS]
    if isinstance(parsed, dict):
        for key in ("error", "message", "Message"):
            if isinstance(parsed.get(key), str):
                return parsed[key]
    return json.dumps(parsed)[:_SHOWN_TEXT_CHARS]


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Retry-After in seconds (the API sends seconds; an HTTP date is ignored)."""
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None
