"""The Python client of the gligabao API (`Memory`), its authentications and its errors.

Importing it loads neither the server nor Powertools: only pydantic, httpx2 and the API's
response models (botocore when SigV4 signs a request).
"""

from gligabao.client.auth import BearerToken, SigV4
from gligabao.client.errors import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    GatewayTimeoutError,
    GligabaoError,
    InternalServerError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    RememberFailed,
    ServiceUnavailableError,
    UnexpectedResponseError,
    UpstreamError,
)
from gligabao.client.memory import GENERATED, LOCAL_API_URL, NO_RETRIES, GraphMLPage, Memory, Retries

__all__ = [
    "GENERATED",
    "LOCAL_API_URL",
    "NO_RETRIES",
    "ApiConnectionError",
    "ApiError",
    "ApiTimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "BearerToken",
    "ConflictError",
    "GatewayTimeoutError",
    "GligabaoError",
    "GraphMLPage",
    "InternalServerError",
    "Memory",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "RememberFailed",
    "Retries",
    "ServiceUnavailableError",
    "SigV4",
    "UnexpectedResponseError",
    "UpstreamError",
]
