"""The eval run's API through the package's client (gligabao.client): SigV4 with the caller's AWS
credentials for an IAM-authorized API, a bearer token for a JWT one, nothing for the local API;
the client's retries (a remember only with its Idempotency-Key, so a retry never stores twice).

The bodies go out as the suite wrote them, `"eval": true` included, and the answers come back
as JSON: the trajectory is kept as the API sent it, field for field.
"""

from __future__ import annotations

from typing import Any

REMEMBER_PATH = "/v1/gb/remember"
QUERY_PATH = "/v1/gb/query"
IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"


class ClientApi:
    def __init__(self, memory, *, names_user: bool = True):
        self.memory = memory
        # With a JWT the user is the token's subject: naming another one is a 403.
        self.names_user = names_user

    def remember(self, body: dict[str, Any], *, idempotency_key: str) -> dict[str, Any]:
        return self._post(REMEMBER_PATH, body, {IDEMPOTENCY_KEY_HEADER: idempotency_key})

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(QUERY_PATH, body, None)

    def _post(self, path: str, body: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        from gligabao.client.errors import ApiError, GligabaoError
        from gligabao.evals.api import CallFailed

        try:
            answer = self.memory.request("POST", path, json=body, headers=headers, idempotent=True)
        except ApiError as error:
            raise CallFailed(error.status, error.error) from None
        except (GligabaoError, ValueError) as error:  # no answer, or one that is not JSON
            raise CallFailed(None, str(error)) from None
        if not isinstance(answer, dict):
            raise CallFailed(None, f"POST {path}: the answer is not a JSON object")
        return answer


def client_api(
    url: str, auth: str | None, *, token: str | None = None, region: str | None = None, retries: int = 2
) -> ClientApi:
    """`auth`: iam (SigV4, botocore's credential chain), jwt (`token`) or none; None: as every
    command of the package infers it (jwt with a token, iam for an execute-api URL, else none)."""
    from gligabao.client import BearerToken, Memory
    from gligabao.client.options import ClientOptions, OptionError

    try:
        credentials = ClientOptions(api=url, auth=auth, token=token, region=region).authentication()
    except OptionError:
        raise ValueError("--auth jwt needs the bearer token in GB_API_TOKEN") from None
    return ClientApi(
        Memory(url, auth=credentials, retries=retries), names_user=not isinstance(credentials, BearerToken)
    )
