"""Errors of the memory core, each carrying the HTTP status the API answers with."""


class GbError(Exception):
    status = 500

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def failure_reason(exc: BaseException) -> str:
    """What may be shown of a failure: the service's own messages (written to be shown), never an
    unexpected exception's text, which might hold anything."""
    return exc.message if isinstance(exc, GbError) else "internal error"


class BadRequest(GbError):
    status = 400


class Unauthorized(GbError):
    """No authenticated user where the API's authentication requires one."""

    status = 401


class Forbidden(GbError):
    """The request names a user other than the authenticated one."""

    status = 403


class NotFound(GbError):
    status = 404


class MethodNotAllowed(GbError):
    status = 405


class Conflict(GbError):
    status = 409


class PayloadTooLarge(GbError):
    status = 413


class ProviderError(GbError):
    """A model provider failed, or its reply was empty, truncated or unparseable."""

    status = 502


class NotConfigured(GbError):
    """A provider key is missing: the endpoints that need it answer 503."""

    status = 503
