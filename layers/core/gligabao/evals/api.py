"""What the eval run needs of the API: a remember and a query, each a JSON body in and out.

`client_api` gives it from the package's client (gligabao.client: SigV4 for an IAM-authorized
API, a bearer token for a JWT one, retries); tests may give an in-process one.
"""

from __future__ import annotations

from typing import Any, Protocol


class CallFailed(Exception):
    """A call the API did not answer with success: its status (None: no answer) and text."""

    def __init__(self, status: int | None, text: str):
        super().__init__(f"{status}: {text}" if status is not None else text)
        self.status = status
        self.text = text


class MemoryApi(Protocol):
    def remember(self, body: dict[str, Any], *, idempotency_key: str) -> dict[str, Any]:
        """POST /v1/gb/remember; raises CallFailed."""
        ...

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /v1/gb/query; raises CallFailed."""
        ...
