"""Secrets on AWS: the provider keys (a JSON secret named by GB_SECRETS_ARN) and the cluster's
database credentials. Read through Powertools parameters, cached per container."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

from gligabao.errors import NotConfigured
from gligabao.settings import Settings

PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
SECRETS_CACHE_SECONDS = 300  # a rotated key is picked up within this many seconds
# A failed read is not cached by Powertools: it is tried again after this many seconds, so that a
# missing route or permission costs one slow request now and then, not every request.
SECRET_FAILURE_RETRY_SECONDS = 15
# Secrets Manager calls fail fast (no route: the connect times out) well within a request's 29 s.
SECRETS_CONNECT_TIMEOUT_SECONDS = 3
SECRETS_READ_TIMEOUT_SECONDS = 5
SECRETS_MAX_ATTEMPTS = 2
RDS_CA_BUNDLE = "rds-ca-bundle.pem"  # in gligabao/db/

_log = logging.getLogger(__name__)


class ProviderKeys:
    """The provider keys that are set: from the settings (the environment), and on Lambda from
    the secret, which wins. A missing key is "not configured" (503), never a crash."""

    def __init__(self, settings: Settings):
        self._settings = settings
        self._from_settings = {
            name: secret.get_secret_value()
            for name, secret in (
                ("ANTHROPIC_API_KEY", settings.anthropic_api_key),
                ("OPENAI_API_KEY", settings.openai_api_key),
            )
            if secret is not None and secret.get_secret_value()
        }

    def __repr__(self) -> str:  # never the keys
        return f"ProviderKeys(configured={sorted(self.all())})"

    def all(self) -> dict[str, str]:
        return self._read()[0]

    def unreadable(self) -> str | None:
        """Why the provider-keys secret could not be read (None: read, or none configured)."""
        return self._read()[1]

    def _read(self) -> tuple[dict[str, str], str | None]:
        keys = dict(self._from_settings)
        if not self._settings.secrets_arn:
            return keys, None
        try:
            secret = _secret_json(self._settings.secrets_arn)
        except SecretUnreadable as exc:
            return keys, exc.reason
        keys.update({k: v for k, v in secret.items() if k in PROVIDER_KEYS and v})
        return keys, None

    def require(self, name: str, what: str | None = None) -> str:
        keys, unreadable = self._read()
        key = keys.get(name)
        if key:
            return key
        what = what or ("LLM" if name == "ANTHROPIC_API_KEY" else "embeddings")
        if unreadable:
            raise NotConfigured(f"{what} not configured: {name} could not be read: {unreadable}")
        raise NotConfigured(f"{what} not configured: {name} is not set")

    def llm_configured(self) -> bool:
        if self._settings.llm_provider == "offline":
            return True
        if self._settings.llm_provider == "openai":
            return "OPENAI_API_KEY" in self.all()
        return self._settings.llm_provider == "bedrock" or "ANTHROPIC_API_KEY" in self.all()

    def embeddings_configured(self) -> bool:
        return self._settings.embedding_provider == "offline" or "OPENAI_API_KEY" in self.all()


class SecretUnreadable(Exception):
    """The provider-keys secret could not be read or parsed; `reason` says why, without values."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


_failures: dict[str, tuple[float, str]] = {}  # arn -> (when, reason): the last failed read
_failures_lock = threading.Lock()


def _secret_json(arn: str) -> dict[str, str]:
    """The provider-keys secret as a JSON object, cached SECRETS_CACHE_SECONDS by Powertools (so a
    rotated value is read within that time); SecretUnreadable when it cannot be read or parsed."""
    with _failures_lock:
        failed = _failures.get(arn)
    if failed and time.monotonic() - failed[0] < SECRET_FAILURE_RETRY_SECONDS:
        raise SecretUnreadable(failed[1])
    try:
        value = _secrets_provider().get(arn, max_age=SECRETS_CACHE_SECONDS)
    except Exception as exc:  # no permission, no route, no such secret: a 503 with the reason
        reason = f"the provider-keys secret could not be read ({_error_name(exc)})"
        _remember_failure(arn, reason)
        _log.error("provider-keys secret unreadable", extra={"secret_arn": arn, "error": _error_name(exc)})
        raise SecretUnreadable(reason) from None
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        parsed = None
    if not isinstance(parsed, dict):
        reason = "the provider-keys secret is not a JSON object"
        _log.error("provider-keys secret malformed", extra={"secret_arn": arn})
        raise SecretUnreadable(reason)
    with _failures_lock:
        _failures.pop(arn, None)
    return {str(k): str(v) for k, v in parsed.items()}


def _remember_failure(arn: str, reason: str) -> None:
    with _failures_lock:
        _failures[arn] = (time.monotonic(), reason)


def _error_name(exc: Exception) -> str:
    """The AWS error code (AccessDeniedException, ResourceNotFoundException, ...) or the
    exception's class (ConnectTimeoutError, EndpointConnectionError): never a value."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = str((response.get("Error") or {}).get("Code") or "")
        if code.isdigit():  # an error body botocore could not parse: its HTTP status
            return f"{_HTTP_ERRORS.get(code, 'HTTP error')} (HTTP {code})"
        if code:
            return code
    cause = exc.__cause__ or exc.__context__
    if type(exc).__name__ in ("GetParameterError", "TransformParameterError") and cause is not None:
        return _error_name(cause)
    return type(exc).__name__


_HTTP_ERRORS = {"403": "access denied", "404": "not found"}

_provider = None
_provider_lock = threading.Lock()


def _secrets_provider():
    """One Powertools secrets provider per container, with timeouts that fail fast."""
    global _provider
    with _provider_lock:
        if _provider is None:
            # Imported here: Powertools parameters pulls in boto3, which cold start does not need.
            from aws_lambda_powertools.utilities.parameters import SecretsProvider
            from botocore.config import Config

            _provider = SecretsProvider(
                boto_config=Config(
                    connect_timeout=SECRETS_CONNECT_TIMEOUT_SECONDS,
                    read_timeout=SECRETS_READ_TIMEOUT_SECONDS,
                    retries={"max_attempts": SECRETS_MAX_ATTEMPTS, "mode": "standard"},
                )
            )
        return _provider


def database_url_from_secret(settings: Settings, secret_arn: str) -> str:
    """The database endpoint (GB_DB_HOST) with the credentials of a database secret (the
    cluster's master user, or the service's own role), over TLS that verifies the server's
    certificate and name.

    Every function, the migrations included, connects to GB_DB_HOST: RDS Proxy in the template's
    production profile, whose certificates come from ACM and chain to Amazon Trust Services' roots
    (Amazon Root CA 1-4, in certifi's bundle: GB_DB_CA=public); the cluster itself in the
    development profile, whose certificate chains to Amazon RDS's own authorities (the bundle
    shipped beside the database code: GB_DB_CA=rds). (psycopg's binary wheel carries its own
    OpenSSL, whose default paths are not Lambda's, hence an explicit file rather than
    `sslrootcert=system`.)"""
    from psycopg.conninfo import make_conninfo

    secret = _database_secret(secret_arn)
    return make_conninfo(
        host=settings.db_host or secret["host"],
        port=secret.get("port", 5432),
        dbname=settings.db_name,
        user=secret["username"],
        password=secret["password"],
        sslmode="verify-full",
        sslrootcert=rds_certificates() if settings.db_ca == "rds" else public_root_certificates(),
    )


def public_root_certificates() -> str:
    """The file of public root certificates (certifi's) that verify RDS Proxy's ACM certificate."""
    import certifi

    return certifi.where()


def rds_certificates() -> str:
    """The file of Amazon RDS's certificate authorities, which verify the cluster's own certificate."""
    return str(Path(__file__).resolve().parent.parent / "db" / RDS_CA_BUNDLE)


def secret_password(secret_arn: str, *, fresh: bool = False) -> str:
    """The password of a database secret (the service role's, which the migrations set);
    `fresh`: read now, not from the cache (a rotation may have just changed it)."""
    return str(_database_secret(secret_arn, fresh=fresh)["password"])


def _database_secret(secret_arn: str, *, fresh: bool = False) -> dict:
    return json.loads(_secrets_provider().get(secret_arn, force_fetch=fresh))


def database_secret(secret_arn: str) -> dict:
    """A database secret's current value (host, port, username, password)."""
    return _database_secret(secret_arn)


def secrets_manager_client():
    """A Secrets Manager client that fails fast (the rotation of the service role's secret)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "secretsmanager",
        config=Config(
            connect_timeout=SECRETS_CONNECT_TIMEOUT_SECONDS,
            read_timeout=SECRETS_READ_TIMEOUT_SECONDS,
            retries={"max_attempts": SECRETS_MAX_ATTEMPTS, "mode": "standard"},
        ),
    )


def clear_caches() -> None:
    """Forget the secrets read and the failures seen (tests; a new container)."""
    global _provider
    with _failures_lock:
        _failures.clear()
    with _provider_lock:
        _provider = None
    try:
        from aws_lambda_powertools.utilities.parameters.base import clear_caches as clear
    except ImportError:
        return
    clear()
