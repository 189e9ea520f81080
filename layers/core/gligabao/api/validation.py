"""Field types shared by the request models: the SPEC's rules for users, datasets and sessions, and
the JSON schema of each rule for the OpenAPI document (patterns a fuzzer can generate from)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from gligabao.ai.stages import LEVELS, MODEL_NAME, ModelPolicy
from gligabao.inputs import PATH_NAME_PATTERN, PATH_NAME_RULE, check_path_name
from gligabao.limits import Limits
from gligabao.timefmt import RFC3339, RFC3339_TIME, parse_rfc3339

if TYPE_CHECKING:
    from gligabao.bootstrap import Bundle

DATASET_NAME_PATTERN = PATH_NAME_PATTERN  # "." and ".." refused: gligabao/inputs.py
DEFAULT_DATASET = "main"


# Code point ranges of the Basic Multilingual Plane, for the documented patterns (JSON Schema's
# ECMA-262 regexes name astral characters differently from Python's; the validators below use
# unicodedata and refuse the astral ones too). tests/unit/test_field_patterns.py checks every
# BMP character against the validators.
CONTROL_RANGES = ((0x0000, 0x001F), (0x007F, 0x009F))  # Unicode category Cc
SPACE_RANGES = (  # str.isspace(): what str.strip() removes
    (0x0009, 0x000D), (0x001C, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)  # fmt: skip
INVISIBLE_RANGES = (  # whitespace and categories Zs, Zl, Zp, Cc, Cf: never at the edges of a user id
    (0x0000, 0x0020), (0x007F, 0x00A0), (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C),
    (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x1680, 0x1680),
    (0x180E, 0x180E), (0x2000, 0x200F), (0x2028, 0x202F), (0x205F, 0x2064), (0x2066, 0x206F),
    (0x3000, 0x3000), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
)  # fmt: skip


def character_class(*ranges: tuple[tuple[int, int], ...]) -> str:
    """The inside of a regex character class, in escapes both ECMA-262 and Python read alike."""
    parts = []
    for low, high in sorted({pair for group in ranges for pair in group}):
        parts.append(f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}")
    return "".join(parts)


_CONTROL = character_class(CONTROL_RANGES)
SPACE = character_class(SPACE_RANGES)
_SPACE_OR_CONTROL = character_class(SPACE_RANGES, CONTROL_RANGES)
_INVISIBLE = character_class(INVISIBLE_RANGES)

# Nothing invisible at either end, no control character inside.
USER_ID_PATTERN = f"^[^{_INVISIBLE}](?:[^{_CONTROL}]*[^{_INVISIBLE}])?$"
# Once trimmed, no control character (the whitespace trimmed may hold some: "chat-42\n").
SESSION_ID_PATTERN = (
    f"^[{SPACE}]*(?:[^{_SPACE_OR_CONTROL}](?:[^{_CONTROL}]*[^{_SPACE_OR_CONTROL}])?)?[{SPACE}]*$"
)
# An RFC 3339 time with an offset (reference_time, as_of), whitespace around it trimmed (timefmt.py).
TIME_PATTERN = f"^[{SPACE}]*{RFC3339_TIME}[{SPACE}]*$"


def rfc3339_time(value: object, subject: str = "") -> datetime | None:
    """An RFC 3339 time with an offset (None stays None); a time that does not exist (February 30,
    24:00, an offset of 24 hours, out of the years 1-9999 in UTC) is a ValueError too, its message
    starting with `subject` when given."""
    if value is None:
        return None
    prefix = f"{subject} " if subject else ""
    if not isinstance(value, str) or not RFC3339.fullmatch(value.strip()):
        raise ValueError(f"{prefix}must be an RFC 3339 time with an offset, e.g. 2022-06-01T00:00:00Z")
    try:
        return parse_rfc3339(value)
    except (ValueError, OverflowError):
        raise ValueError(f"{prefix}is not a valid time") from None


def time_schema(description: str) -> dict[str, Any]:
    """An optional time; the pattern cannot know that February 30 is no date (the validator does)."""
    return {
        "anyOf": [{"type": "string", "pattern": TIME_PATTERN}, {"type": "null"}],
        "description": description,
    }


# Something left once trimmed, and no NUL (PostgreSQL text cannot hold one).
NON_BLANK_TEXT_PATTERN = f"^[^\\u0000]*[^{SPACE}\\u0000][^\\u0000]*$"


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
    return check_path_name(value, "dataset")


def resolve_session_id(value: str | None) -> str | None:
    """The seed's rule, with this server's limit: see `session_id_within`."""
    return session_id_within(value, _limits().session_id_max_bytes)


def session_id_within(value: str | None, most: int) -> str | None:
    """The seed's rule: trimmed; empty means no session; at most `most` bytes (128 by default), no
    control characters. Pure: the importer (client/bulk_import.py) checks lines with it too."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if len(value.encode("utf-8", "surrogatepass")) > most:
        raise ValueError(f"session_id must be at most {most} bytes")
    if _has_control_characters(value):
        raise ValueError("session_id must not contain control characters")
    return value


def server_bundle() -> Bundle:
    """The container's bundle, imported when a request is validated (not when this module is): the
    client (gligabao.client) reads responses with these models without the server or Powertools."""
    from gligabao.api.deps import memory

    return memory()


def _limits() -> Limits:
    return server_bundle().limits


def model_policy() -> ModelPolicy:
    """What this deployment lets a request's `models` and `reasoning` ask for (the operator pays)."""
    settings = server_bundle().settings
    return ModelPolicy(settings.request_models, settings.max_reasoning)


def _strictly_string(value: object) -> object:
    if value is not None and not isinstance(value, str):
        raise ValueError("must be a string")
    return value


class Documented:
    """A field's JSON schema in the OpenAPI document, built when the document is: the limits it
    states are the container's (GB_USER_ID_MAX_BYTES, ...), as the validators enforce them."""

    def __init__(self, schema: Callable[[], dict[str, Any]]):
        self.schema = schema

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return self.schema()


def _user_id_schema() -> dict[str, Any]:
    most = _limits().user_id_max_bytes
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": most,  # characters; the rule is bytes of UTF-8, which only a shorter id can meet
        "pattern": USER_ID_PATTERN,
        "description": f"an exact identity, compared byte for byte: at most {most} bytes of UTF-8, no "
        "control characters, not beginning or ending with whitespace or an invisible character",
    }


def _session_id_schema() -> dict[str, Any]:
    most = _limits().session_id_max_bytes
    return {
        "anyOf": [
            {"type": "string", "maxLength": most, "pattern": SESSION_ID_PATTERN},
            {"type": "null"},
        ],
        "description": f"labels what the call touches; trimmed, then at most {most} bytes of UTF-8 "
        "without control characters; empty means no session",
    }


def _path_name_schema() -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": 64,
        "pattern": PATH_NAME_PATTERN,
        "description": PATH_NAME_RULE,
    }


def path_name(what: str) -> Any:
    """The type of a name a path carries (a dataset's, an ontology's): gligabao/inputs.py's rule,
    its refusals naming `what`."""
    return Annotated[
        str,
        BeforeValidator(_strictly_string),
        AfterValidator(lambda value: check_path_name(value, what)),
        Documented(_path_name_schema),
    ]


UserId = Annotated[
    str, BeforeValidator(_strictly_string), AfterValidator(check_user_id), Documented(_user_id_schema)
]
DatasetName = path_name("dataset")
SessionId = Annotated[
    str | None,
    BeforeValidator(_strictly_string),
    AfterValidator(resolve_session_id),
    Documented(_session_id_schema),
]
DatasetField = Annotated[DatasetName, Field(default=DEFAULT_DATASET)]


# --- reasoning and models: the stages of each operation -----------------------------------------

# A level in any case, with whitespace around it: what ai.stages.parse_level accepts.
LEVEL_PATTERN = (
    f"^[{SPACE}]*(?:"
    + "|".join("".join(f"[{ch.upper()}{ch}]" for ch in level) for level in LEVELS)
    + f")[{SPACE}]*$"
)
MODEL_NAME_PATTERN = f"^{MODEL_NAME.pattern}$"


def reasoning_schema(
    stages: tuple[str, ...],
    main_stage: str,
    aliases: Mapping[str, str] | None = None,
    idle: tuple[str, ...] = (),
) -> dict[str, Any]:
    level = {"type": "string", "pattern": LEVEL_PATTERN}
    names = [*stages, *(aliases or {}), *idle]
    return {
        "anyOf": [
            level,
            {"type": "object", "propertyNames": {"enum": names}, "additionalProperties": level},
            {"type": "null"},
        ],
        "description": f"{', '.join(LEVELS)} (any case): the level of the {main_stage} stage, "
        f"or an object of a level per stage ({', '.join(stages)}); a stage left out reasons at none; "
        f"at most {model_policy().max_reasoning} here (GB_MAX_REASONING; 400 above)"
        + _aliases_note(aliases, idle),
    }


def _aliases_note(aliases: Mapping[str, str] | None, idle: tuple[str, ...] = ()) -> str:
    """The gligabao server's stage names, as the schemas' descriptions tell them."""
    if not aliases:
        return ""
    named = ", ".join(f"{alias} = {stage}" for alias, stage in aliases.items())
    note = f". The gligabao server's names are taken too: {named} (extract wins over summarize_chunk)"
    return note + (f"; {', '.join(idle)} is checked and unused (no timeseries here)" if idle else "")


def models_schema(stages: tuple[str, ...], aliases: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "anyOf": [
            {
                "type": "object",
                "propertyNames": {"enum": [*stages, *(aliases or {})]},
                "additionalProperties": {"type": "string", "pattern": MODEL_NAME_PATTERN},
            },
            {"type": "null"},
        ],
        "description": f"a model per stage ({', '.join(stages)}); a stage left out uses the default model; "
        f"only {', '.join(model_policy().allowed_models)} here (GB_ALLOWED_MODELS; 400 for another)"
        + _aliases_note(aliases),
    }
