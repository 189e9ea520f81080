"""The service's one Powertools `Logger`, with a safeguard that keeps secrets out of every log line.

Use `get_logger()` everywhere (never a `Logger()` of your own). Modules may also log through
`logging.getLogger(__name__)`: the `gligabao.*` loggers propagate to this one's handler, so
their records come out as the same structured JSON, redacted the same way.

Redaction happens twice, so a secret cannot reach the logs even by mistake:

* a `RedactingFilter` on the logger rewrites the record itself (message, arguments, extra
  fields) before any handler sees it;
* the `RedactingFormatter` redacts the structured log dict (appended keys, exception text
  included) by value and by key name, and runs the token patterns once more over the final
  JSON line.

Locally, `gligabao serve` turns the JSON into the console's short human lines (use_console_lines):
one line a request, warnings and errors, nothing else; redacted the same way.

What counts as a secret: Anthropic and OpenAI keys (`sk-ant-...`, `sk-...`), AWS access key
ids, long bearer tokens, passwords in URLs, and the value of any field or `key: value` /
`key=value` pair named like a password, secret, API key or token.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import RESERVED_LOG_ATTRS, LambdaPowertoolsFormatter

from gligabao.settings import environment_value

SERVICE_DEFAULT = "gligabao"
REDACTED = "[REDACTED]"

# Patterns whose match is the secret itself; safe to apply to serialized JSON (they never
# match a quote or a backslash, so the line stays valid JSON).
_TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Anthropic keys: sk-ant-api03-..., sk-ant-admin01-...
    (re.compile(r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{6,}"), REDACTED),
    # OpenAI-style keys: sk-..., sk-proj-..., sk-svcacct-... (not words such as "task-...")
    (re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{16,}"), REDACTED),
    # AWS access key ids
    (re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"), REDACTED),
    # Bearer tokens (keep the scheme, drop the credential)
    (re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/\-]{16,}=*"), r"\1\2" + REDACTED),
    # Passwords in URLs: scheme://user:password@host
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\"\\]+:)[^\s@/\"\\]+(@)"), r"\1" + REDACTED + r"\2"),
)

# `password: value`, `"api_key": "value"`, `secret=value` inside free text (applied to
# strings before serialization, where quotes are not escaped yet).
_KEY_VALUE_PATTERN = re.compile(
    r"""(?ix)
    (?<![:/])  # not inside an ARN or a path (arn:aws:secretsmanager:...:secret:name)
    (["']?\b(?:[a-z0-9]+[_\-])*(?:password|passwd|pwd|secret|api[_\-]?key|access[_\-]?key|private[_\-]?key
         |client[_\-]?secret|secret[_\-]?key|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token
         |session[_\-]?token|token|authorization)["']?
     \s*[:=]\s*)
    ("(?:[^"\\]|\\.)*"|'[^']*'|\[REDACTED\]|[^\s,;&}\]]+)
    """
)

# Field names whose value is always redacted, whatever it looks like (normalized: lower case,
# '-' as '_'). Counters such as `input_tokens` are not secrets and do not match.
_SENSITIVE_SUFFIXES = (
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "client_secret",
    "secret_key",
    "access_token",
    "auth_token",
    "refresh_token",
    "session_token",
    "authorization",
)
_SENSITIVE_NAMES = frozenset({"token", "pwd", "anthropic_api_key", "openai_api_key"})


def is_sensitive_key(name: str) -> bool:
    """True when a field with this name holds a secret (its value is then never logged)."""
    key = str(name).lower().replace("-", "_")
    return key in _SENSITIVE_NAMES or key.endswith(_SENSITIVE_SUFFIXES)


def _redact_key_value(match: re.Match[str]) -> str:
    value = match.group(2)
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group(1)}{quote}{REDACTED}{quote}"


def redact_text(text: str) -> str:
    """The text with everything that looks like a secret replaced by `[REDACTED]`."""
    for pattern, replacement in _TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return _KEY_VALUE_PATTERN.sub(_redact_key_value, text)


def _redact_tokens(text: str) -> str:
    for pattern, replacement in _TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact(value: Any, _depth: int = 0) -> Any:
    """A copy of `value` (str, mapping, list, tuple, scalar) with secrets redacted, by value and by key."""
    if isinstance(value, str):
        return redact_text(value)
    if _depth > 20:  # a pathological structure: do not recurse forever
        return REDACTED
    if isinstance(value, Mapping):
        return {k: _redact_field(k, v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [redact(v, _depth + 1) for v in value]
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    # Any other object is logged through str(): redact that string.
    return redact_text(str(value))


def _redact_field(name: Any, value: Any, depth: int = 0) -> Any:
    """The value of a field: `[REDACTED]` for a secret's name, else the value redacted."""
    if isinstance(name, str) and is_sensitive_key(name) and value is not None:
        return REDACTED
    return redact(value, depth)


class RedactingFilter(logging.Filter):
    """Rewrites a record so that its message, arguments and extra fields carry no secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            if isinstance(record.msg, str):
                record.msg = redact_text(record.getMessage())
                record.args = None
            elif isinstance(record.msg, (Mapping, list, tuple)):
                record.msg = redact(record.msg)
            for key in [k for k in record.__dict__ if k not in RESERVED_LOG_ATTRS]:
                value = record.__dict__[key]
                record.__dict__[key] = _redact_field(key, value)
        except Exception:
            pass
        return True


class RedactingFormatter(LambdaPowertoolsFormatter):
    """The Powertools JSON formatter, redacting the structured record and the final line."""

    def serialize(self, log: Mapping[str, Any]) -> str:  # type: ignore[override]
        return _redact_tokens(super().serialize(redact(log)))


# The extra field of a record that is one of the console's lines (a request's, a job's).
CONSOLE_LINE = "console_line"


class ConsoleFormatter(RedactingFormatter):
    """The local console's line of a record: `HH:MM:SS message`, `warning: ` or `error: ` before a
    warning's or an error's message, an exception as its type and first line (its traceback is in
    the JSON of `--log-format json`); one line, redacted like the JSON."""

    def format(self, record: logging.LogRecord) -> str:  # type: ignore[override]
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            said = str(error).strip().splitlines()
            text += f" ({type(error).__name__}: {said[0]})" if said else f" ({type(error).__name__})"
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        return redact_text(f"{stamp} {_level_prefix(record.levelno)}" + " ".join(text.split()))


def _level_prefix(level: int) -> str:
    if level >= logging.ERROR:
        return "error: "
    return "warning: " if level >= logging.WARNING else ""


class _ConsoleLinesOnly(logging.Filter):
    """On the console, of the INFO records only the console's own lines (a record per request
    would be a flood); warnings and errors all."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.INFO or bool(getattr(record, CONSOLE_LINE, False))


class _StdoutHandler(logging.StreamHandler):
    """A stream handler writing to whatever `sys.stdout` is at the time of each record
    (Lambda's stdout, or the capture of a test)."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self):  # type: ignore[override]
        return sys.stdout

    @stream.setter
    def stream(self, _value) -> None:  # StreamHandler.setStream: ignored, always sys.stdout
        pass


def service_name() -> str:
    return environment_value("POWERTOOLS_SERVICE_NAME") or SERVICE_DEFAULT


def _build_logger() -> Logger:
    log = Logger(
        service=service_name(),
        logger_handler=_StdoutHandler(),
        logger_formatter=RedactingFormatter(utc=True),
    )
    # If a plain Powertools Logger of the same service was configured before this module
    # was imported, Powertools reuses its handler and ignores ours: put the safeguard on it.
    handler = log.registered_handler
    if not isinstance(handler.formatter, RedactingFormatter):
        formatter = RedactingFormatter(utc=True)
        formatter.append_keys(service=log.service)
        handler.setFormatter(formatter)
    if not any(isinstance(f, RedactingFilter) for f in log._logger.filters):
        log.addFilter(RedactingFilter())
    return log


logger: Logger = _build_logger()


def get_logger() -> Logger:
    """The service's Powertools Logger (JSON lines on stdout, secrets redacted)."""
    return logger


def use_console_lines() -> None:
    """This process logs for a person at a terminal (`gligabao serve`, its worker processes): the
    console's short lines instead of JSON, and the monitoring events on their request's line
    instead of their JSON and EMF (monitoring.py). Lambda never calls it."""
    handler = logger.registered_handler
    handler.setFormatter(ConsoleFormatter(utc=True))
    if not any(isinstance(f, _ConsoleLinesOnly) for f in handler.filters):
        handler.addFilter(_ConsoleLinesOnly())


def console_lines() -> bool:
    """True once use_console_lines was called in this process."""
    return isinstance(logger.registered_handler.formatter, ConsoleFormatter)


def log_console_line(text: str) -> None:
    """One of the console's lines (a request's, a job's), through the redacting logger."""
    logger.info(text, extra={CONSOLE_LINE: True})
