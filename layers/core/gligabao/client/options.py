"""A `Memory` from a command's options (`gligabao mcp`, `gligabao eval`): the API's URL, how to
authenticate to it, whose memory and which dataset."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Literal

from gligabao.client.auth import BearerToken, SigV4, region_of_url
from gligabao.client.memory import DEFAULT_DATASET, LOCAL_API_URL, Memory

# How every command that calls the API (mcp, explore, eval) picks its authentication: one wording.
AUTH_PRECEDENCE = "GB_API_AUTH, else jwt when GB_API_TOKEN is set, else iam for an execute-api URL, else none"
AUTH_HELP = (
    "the API's authentication: iam signs with your AWS credentials, jwt sends the bearer token of "
    f"GB_API_TOKEN (a token is never a flag), none sends nothing (default: {AUTH_PRECEDENCE})"
)


class DefaultsShown(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the help already says it or the option
    is a switch; an option whose default is None says in its help where its value comes from."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or not action.option_strings or action.default in (None, False):
            return text
        if action.default is argparse.SUPPRESS:
            return text
        return f"{text} (default: %(default)s)"


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
        """As given; else jwt with a token, iam for an execute-api URL, none otherwise
        (AUTH_PRECEDENCE, the environment's GB_API_AUTH being given here as `auth`)."""
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
