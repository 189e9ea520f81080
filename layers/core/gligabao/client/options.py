"""A `Memory` from a command's options (`gligabao mcp`, `gligabao eval`): the API's URL, how to
authenticate to it, whose memory and which dataset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gligabao.client.auth import BearerToken, SigV4, region_of_url
from gligabao.client.memory import DEFAULT_DATASET, LOCAL_API_URL, Memory


class OptionError(ValueError):
    """Options that cannot make a client (the message says which and why)."""


@dataclass(frozen=True)
class ClientOptions:
    api: str | None = None
    auth: Literal["iam", "jwt", "none"] | None = None
    token: str | None = None
    user_id: str | None = None
    dataset: str | None = None
    region: str | None = None  # with iam: the API's region when its URL does not say it

    def auth_mode(self) -> str:
        """As given; else jwt with a token, iam for an execute-api URL, none otherwise."""
        if self.auth:
            return self.auth
        if self.token:
            return "jwt"
        return "iam" if region_of_url(self.api or LOCAL_API_URL) else "none"

    def authentication(self) -> SigV4 | BearerToken | None:
        """The client's authentication for `auth_mode()`: SigV4, the bearer token, or none."""
        mode = self.auth_mode()
        if mode == "jwt":
            if not self.token:
                raise OptionError("auth jwt needs the bearer token in GB_API_TOKEN")
            return BearerToken(self.token)
        return SigV4(self.region) if mode == "iam" else None

    def memory(self) -> Memory:
        auth = self.authentication()
        if not isinstance(auth, BearerToken) and not self.user_id:
            raise OptionError("whose memory? give --user-id (or GB_USER_ID)")
        return Memory(
            self.api or LOCAL_API_URL, auth, user_id=self.user_id, dataset=self.dataset or DEFAULT_DATASET
        )
