"""The schema migrations at deploy time: the CloudFormation custom resource `Custom::Migrations`.

CloudFormation invokes the migrate function with a Create, Update or Delete request and waits
for a JSON answer PUT to the request's pre-signed `ResponseURL`. Create and Update apply the
pending migrations (`apply`, wired by the bootstrap: `gligabao.db.migrate.migrate`); Delete does nothing (the data stays with the
database, whose own deletion policy decides). Whatever happens, an answer is sent: without one
the stack would hang until the resource's ServiceTimeout.

The template's `SchemaVersion` property names the newest migration of its code. A rollback is
an Update whose properties are the older template's: a requested SchemaVersion below the old
one (or below what the database has applied) is answered SUCCESS, the schema kept and nothing
run; migrations are forward-only and the older code works on the newer schema.

Each migration runs in its own transaction with a short lock_timeout (retried a few times) and
a statement_timeout that ends before the function's own timeout, so a failure is always answered
FAILED with its reason, and the migration that failed is rolled back whole.

Nothing heavy is imported at module level, so that even a broken package still answers FAILED.
"""

from __future__ import annotations

import json
import logging
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gligabao.db.connection import Database

PHYSICAL_RESOURCE_ID = "gligabao-migrations"
REASON_MAX_CHARS = 400
RESPONSE_MAX_BYTES = 4096  # CloudFormation's limit on the whole answer
SEND_ATTEMPTS = 3
SEND_TIMEOUT_SECONDS = 30
# Leave this much of the invocation to answer CloudFormation after the last connection attempt.
ANSWER_MARGIN_MS = 60_000
RETRY_INTERVAL_SECONDS = 10
SCHEMA_VERSION_PROPERTY = "SchemaVersion"
# While DDL waits for a table's lock, every query of that table queues behind it: 5 s at most,
# well within an API request's 29 s (and the proxy's 10 s borrow timeout on top still fits),
# then the migration rolls back, pauses so that the queue drains, and tries again.
LOCK_TIMEOUT_MS = 5_000
LOCK_ATTEMPTS = 4
LOCK_PAUSE_SECONDS = 5.0


@dataclass(frozen=True)
class Outcome:
    """What a Create or Update did: the migrations applied, or (`kept_at`) nothing, because the
    database already has a newer schema than the one asked for."""

    applied: list[str] = field(default_factory=list)
    kept_at: int | None = None


class SchemaMismatch(Exception):
    """The template asks for a schema this code does not have (a template and a layer of two
    releases)."""


_PASSWORD_IN_CONNINFO = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_PASSWORD_IN_URL = re.compile(r"(://[^/@\s:]*:)[^@\s]*@")

_fallback_logger = logging.getLogger(__name__)


def handle(
    event: dict[str, Any],
    context: Any = None,
    *,
    logger: Any = None,
    apply: Callable[[float | None, int | None], Outcome],
    passwords: Callable[[], list[str]] = list,
) -> dict[str, Any]:
    """Serve one custom-resource request and answer CloudFormation; returns the answer sent.

    `apply(deadline, schema_version)` applies the migrations (the version the template asks
    for, None when it names none); `passwords()` lists the secrets no reason may show.
    """
    log = logger or _fallback_logger
    request_type = event.get("RequestType")
    status, reason, data = "SUCCESS", "", {}
    try:
        if request_type in ("Create", "Update"):
            requested = schema_version(event.get("ResourceProperties"))
            previous = (
                schema_version(event.get("OldResourceProperties")) if request_type == "Update" else None
            )
            if requested is not None and previous is not None and requested < previous:
                outcome = Outcome(kept_at=previous)  # a rollback: never touch the database
            else:
                outcome = apply(_deadline(context), requested)
            if outcome.kept_at is not None:
                reason = (
                    f"schema kept at version {outcome.kept_at}: this request asks for {requested}, an "
                    "older one (a rollback); nothing ran"
                )
                data = {"applied": "", "count": "0", "kept": str(outcome.kept_at)}
                log.info("schema kept", extra={"request_type": request_type, "kept_at": outcome.kept_at})
            else:
                applied = outcome.applied
                data = {"applied": ",".join(applied), "count": str(len(applied))}
                reason = f"{len(applied)} migration(s) applied" if applied else "schema up to date"
                log.info("migrations applied", extra={"request_type": request_type, "applied": applied})
        elif request_type == "Delete":
            reason = "nothing to do on delete"
            log.info("delete: nothing to do", extra={"request_type": request_type})
        else:
            status, reason = "FAILED", f"unknown request type {request_type!r}"
    except Exception as exc:  # every failure is an answer, never a silence
        status, reason = "FAILED", safe_reason(exc, _safely(passwords))
        log.error("migrations failed", extra={"request_type": request_type, "reason": reason})
    answer = {
        "Status": status,
        "Reason": reason,
        "PhysicalResourceId": event.get("PhysicalResourceId") or PHYSICAL_RESOURCE_ID,
        "StackId": event.get("StackId"),
        "RequestId": event.get("RequestId"),
        "LogicalResourceId": event.get("LogicalResourceId"),
        "NoEcho": False,
        "Data": data,
    }
    send_response(event["ResponseURL"], answer, log)
    return answer


def schema_version(properties: dict[str, Any] | None) -> int | None:
    """The SchemaVersion of a request's properties (CloudFormation sends them as strings)."""
    value = (properties or {}).get(SCHEMA_VERSION_PROPERTY)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{SCHEMA_VERSION_PROPERTY} {value!r} is not a migration number") from None


def apply_migrations(
    database: Database, embedding_dimensions: int, deadline: float | None = None, requested: int | None = None
) -> Outcome:
    """Connect (waiting for the database until `deadline`, a time.monotonic() value) and migrate,
    unless the database already has a schema newer than `requested` (then nothing runs)."""
    from gligabao.db.connection import DatabaseUnavailable
    from gligabao.db.migrate import MigrationLimits, migrate, newest_applied, newest_migration

    newest_here = newest_migration()
    if requested is not None and requested > newest_here:
        raise SchemaMismatch(
            f"the template asks for schema version {requested} but this code's newest migration is "
            f"{newest_here}: deploy the template and the layer of one release"
        )
    while True:
        try:
            conn = database.connection()
            break
        except DatabaseUnavailable:
            # A new cluster's proxy target can take minutes to become available.
            if deadline is None or time.monotonic() + RETRY_INTERVAL_SECONDS > deadline:
                raise
            time.sleep(RETRY_INTERVAL_SECONDS)
    applied_there = newest_applied(conn)
    if requested is not None and applied_there is not None and applied_there > requested:
        return Outcome(kept_at=applied_there)
    limits = MigrationLimits(
        lock_timeout_ms=LOCK_TIMEOUT_MS,
        lock_attempts=LOCK_ATTEMPTS,
        lock_pause_seconds=LOCK_PAUSE_SECONDS,
        deadline=deadline,
    )
    return Outcome(applied=migrate(conn, embedding_dimensions, limits))


def _deadline(context: Any) -> float | None:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return None
    return time.monotonic() + max(0, remaining() - ANSWER_MARGIN_MS) / 1000


def safe_reason(exc: BaseException, passwords: list[str] = ()) -> str:
    """A short reason for CloudFormation's events: the error and its cause, no password."""
    parts = [f"{type(exc).__name__}: {exc}"]
    cause = exc.__cause__
    if cause is not None:
        parts.append(f"{type(cause).__name__}: {cause}")
    text = " / ".join(" ".join(p.split()) for p in parts)
    for secret in passwords:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _PASSWORD_IN_CONNINFO.sub(r"\1***", text)
    text = _PASSWORD_IN_URL.sub(r"\1***@", text)
    return text[:REASON_MAX_CHARS]


def _safely(passwords: Callable[[], list[str]]) -> list[str]:
    try:
        return list(passwords())
    except Exception:  # a broken configuration still gets its answer
        return []


def passwords_in(urls: list[str | None]) -> list[str]:
    """The passwords of these database URLs or conninfo strings."""
    from psycopg.conninfo import conninfo_to_dict

    found = []
    for url in filter(None, urls):
        try:
            password = conninfo_to_dict(url).get("password")
        except Exception:
            continue
        if password:
            found.append(str(password))
    return found


def send_response(url: str, answer: dict[str, Any], log: Any = None) -> None:
    """PUT the answer to the pre-signed URL (empty Content-Type: the signature has none)."""
    log = log or _fallback_logger
    body = json.dumps(answer).encode()
    if len(body) > RESPONSE_MAX_BYTES:
        answer = {**answer, "Data": {"count": answer["Data"].get("count", "")}}
        body = json.dumps(answer).encode()
    request = urllib.request.Request(
        url, data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    for attempt in range(1, SEND_ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(request, timeout=SEND_TIMEOUT_SECONDS) as reply:
                log.info(
                    "answered CloudFormation", extra={"status": answer["Status"], "http_status": reply.status}
                )
                return
        except (urllib.error.URLError, OSError) as exc:
            log.warning("answering CloudFormation failed", extra={"attempt": attempt, "error": str(exc)})
            if attempt == SEND_ATTEMPTS:
                raise
            time.sleep(attempt)
