"""Field types shared by the request models: the SPEC's rules for users, datasets and sessions."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field

from gligabao.api.deps import memory
from gligabao.limits import Limits

DATASET_NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
DEFAULT_DATASET = "main"

_DATASET_NAME = re.compile(DATASET_NAME_PATTERN)


def _has_control_characters(value: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in value)


def check_user_id(value: str) -> str:
    """A user id is an exact identity, never trimmed: trimming would let "u1\u00a0" read and delete
    the data of "u1". An id that begins or ends with whitespace or an invisible character is refused."""
    if not value:
        raise ValueError("user_id is required")
    if _is_invisible(value[0]) or _is_invisible(value[-1]):
        raise ValueError("user_id must not begin or end with whitespace or invisible characters")
    most = _limits().user_id_max_bytes
    if len(value.encode()) > most or _has_control_characters(value):
        raise ValueError(f"user_id must be at most {most} bytes without control characters")
    return value


def _is_invisible(character: str) -> bool:
    """Whitespace (any Unicode space or line break) or a format character such as U+200B or U+FEFF."""
    return character.isspace() or unicodedata.category(character) in ("Zs", "Zl", "Zp", "Cc", "Cf")


def check_dataset_name(value: str) -> str:
    if not _DATASET_NAME.match(value):
        raise ValueError("dataset must be 1-64 characters of A-Z a-z 0-9 _ . -")
    return value


def resolve_session_id(value: str | None) -> str | None:
    """The seed's rule: trimmed; empty means no session; at most 128 bytes, no control characters."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    most = _limits().session_id_max_bytes
    if len(value.encode()) > most:
        raise ValueError(f"session_id must be at most {most} bytes")
    if _has_control_characters(value):
        raise ValueError("session_id must not contain control characters")
    return value


def _limits() -> Limits:
    return memory().limits


def _strictly_string(value: object) -> object:
    if value is not None and not isinstance(value, str):
        raise ValueError("must be a string")
    return value


UserId = Annotated[str, BeforeValidator(_strictly_string), AfterValidator(check_user_id)]
DatasetName = Annotated[str, BeforeValidator(_strictly_string), AfterValidator(check_dataset_name)]
SessionId = Annotated[str | None, BeforeValidator(_strictly_string), AfterValidator(resolve_session_id)]
DatasetField = Annotated[DatasetName, Field(default=DEFAULT_DATASET)]
