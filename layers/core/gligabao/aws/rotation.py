"""The rotation of the service role's password (gligabao_app, its secret DatabaseAppSecret), served
by the migrate function as the secret's Secrets Manager rotation function.

Secrets Manager labels a new version of the secret AWSPENDING (its id is the request's
ClientRequestToken) and invokes the function four times, one step each:

    createSecret   the pending version gets a new random password (nothing else changes)
    setSecret      the database gives the role that password (as the tables' owner)
    testSecret     a connection as the role with that password, straight to the database
    finishSecret   AWSCURRENT moves to the pending version: RDS Proxy and the functions follow

A step repeated (Secrets Manager retries) does its work again or finds it done; a step out of
order is refused (RotationRefused), and nothing changes. The database side is a `RolePasswords`
(gligabao.db.role_passwords; tests give a fake), the secret a boto3 Secrets Manager client.
"""

from __future__ import annotations

import json
import logging
import secrets as random_source
import string
from collections.abc import Callable
from typing import Any, Protocol

_log = logging.getLogger(__name__)

PENDING = "AWSPENDING"
CURRENT = "AWSCURRENT"
STEPS = ("createSecret", "setSecret", "testSecret", "finishSecret")
# As the template's first password (GenerateSecretString, ExcludePunctuation): letters and digits
# need no quoting anywhere (a connection string, a shell), 40 of them are 238 bits.
PASSWORD_LENGTH = 40
PASSWORD_ALPHABET = string.ascii_letters + string.digits


class RotationRefused(Exception):
    """A step that cannot run now: another secret, rotation off, a step out of order."""


class RotationFailed(Exception):
    """A step failed; its message is the reason, without a password (no traceback is kept)."""


class RolePasswords(Protocol):
    def set_password(self, role: str, password: str) -> None: ...

    def check_login(self, role: str, password: str) -> None:
        """Raises when `role` cannot log in with `password`."""
        ...


def is_rotation_event(event: Any) -> bool:
    return isinstance(event, dict) and {"Step", "SecretId", "ClientRequestToken"} <= event.keys()


def serve_rotation(
    event: dict[str, Any],
    *,
    logger: Any = None,
    step: Callable[[dict[str, Any]], str],
    passwords: Callable[[], list[str]] = list,
) -> dict[str, str]:
    """Run one step (`step`, wired by the bootstrap: `rotate` on this container's clients); a
    failure is raised as RotationFailed with a reason that shows no password, and Secrets Manager
    keeps the rotation pending and tries the step again."""
    from gligabao.db.deploy_migrations import safe_reason

    log = logger or _log
    try:
        done = step(event)
    except Exception as exc:
        try:
            known = list(passwords())
        except Exception:  # a broken configuration still gets its reason
            known = []
        reason = safe_reason(exc, known)
        log.error("rotation step failed", extra={"step": event.get("Step"), "reason": reason})
        raise RotationFailed(reason) from None
    log.info("rotation step done", extra={"step": event.get("Step"), "done": done})
    return {"done": done}


def rotate(event: dict[str, Any], client: Any, database: RolePasswords, *, secret_arn: str, role: str) -> str:
    """Run one step of a rotation of `secret_arn` (the only secret this function rotates), whose
    username must be `role`; returns what was done, for the log."""
    step, token = event["Step"], event["ClientRequestToken"]
    if step not in STEPS:
        raise RotationRefused(f"unknown rotation step {step!r}")
    metadata = client.describe_secret(SecretId=event["SecretId"])
    if metadata["ARN"] != secret_arn:
        raise RotationRefused(f"this function rotates only the service role's secret, not {metadata['ARN']}")
    if not metadata.get("RotationEnabled"):
        raise RotationRefused("rotation is not enabled on the secret")
    stages = metadata.get("VersionIdsToStages") or {}
    if token not in stages:
        raise RotationRefused(f"version {token} of the secret is not part of a rotation")
    if CURRENT in stages[token]:
        return f"{step}: version {token} is already current, nothing to do"
    if PENDING not in stages[token]:
        raise RotationRefused(f"version {token} of the secret is not pending")
    arn = metadata["ARN"]
    if step == "createSecret":
        return _create(client, arn, token, role)
    pending = _pending(client, arn, token, step, role)
    if step == "setSecret":
        database.set_password(role, pending["password"])
        return f"setSecret: {role}'s password in the database is version {token}'s"
    if step == "testSecret":
        database.check_login(role, pending["password"])
        return f"testSecret: {role} logs in with version {token}'s password"
    # finishSecret: never a version the database does not have (a finish before its setSecret).
    database.check_login(role, pending["password"])
    current = next(version for version, labels in stages.items() if CURRENT in labels)
    client.update_secret_version_stage(
        SecretId=arn, VersionStage=CURRENT, MoveToVersionId=token, RemoveFromVersionId=current
    )
    return f"finishSecret: version {token} is current (was {current})"


def _create(client: Any, arn: str, token: str, role: str) -> str:
    current = json.loads(client.get_secret_value(SecretId=arn, VersionStage=CURRENT)["SecretString"])
    if current.get("username") != role:
        raise RotationRefused(f"the secret's username is not {role}")
    if _value(client, arn, token) is not None:
        return f"createSecret: version {token} has its password already"
    value = {**current, "password": new_password()}
    client.put_secret_value(
        SecretId=arn, ClientRequestToken=token, SecretString=json.dumps(value), VersionStages=[PENDING]
    )
    return f"createSecret: version {token} has a new password"


def _pending(client: Any, arn: str, token: str, step: str, role: str) -> dict[str, Any]:
    value = _value(client, arn, token)
    if value is None:
        raise RotationRefused(f"{step} before createSecret: version {token} has no password yet")
    pending = json.loads(value)
    if pending.get("username") != role or not pending.get("password"):
        raise RotationRefused(f"version {token} is not a password of {role}")
    return pending


def _value(client: Any, arn: str, token: str) -> str | None:
    try:
        return client.get_secret_value(SecretId=arn, VersionId=token, VersionStage=PENDING)["SecretString"]
    except client.exceptions.ResourceNotFoundException:
        return None


def new_password() -> str:
    return "".join(random_source.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH))
