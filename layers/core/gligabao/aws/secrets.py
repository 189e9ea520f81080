"""Secrets on AWS: the provider keys (a JSON secret named by GB_SECRETS_ARN) and the cluster's
database credentials. Read through Powertools parameters, cached per container."""

from __future__ import annotations

import json

from gligabao.errors import NotConfigured
from gligabao.settings import Settings

PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
SECRETS_CACHE_SECONDS = 300  # a rotated key is picked up within this many seconds


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
        keys = dict(self._from_settings)
        if self._settings.secrets_arn:
            secret = _secret_json(self._settings.secrets_arn)
            keys.update({k: v for k, v in secret.items() if k in PROVIDER_KEYS and v})
        return keys

    def require(self, name: str) -> str:
        key = self.all().get(name)
        if key:
            return key
        what = "LLM" if name == "ANTHROPIC_API_KEY" else "embeddings"
        raise NotConfigured(f"{what} not configured: {name} is not set")

    def llm_configured(self) -> bool:
        return self._settings.llm_provider == "bedrock" or "ANTHROPIC_API_KEY" in self.all()

    def embeddings_configured(self) -> bool:
        return "OPENAI_API_KEY" in self.all()


def _secret_json(arn: str) -> dict[str, str]:
    # Imported here: Powertools parameters pulls in boto3, which cold start does not need.
    from aws_lambda_powertools.utilities import parameters

    try:
        value = parameters.get_secret(arn, max_age=SECRETS_CACHE_SECONDS)
    except Exception:  # an unreachable or missing secret is "not configured", not a crash
        return {}
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        return {}
    return {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}


def database_url_from_secret(settings: Settings, secret_arn: str) -> str:
    """The RDS Proxy endpoint with the credentials of a database secret (the cluster's master
    user, or the service's own role): TLS required."""
    from psycopg.conninfo import make_conninfo

    secret = _database_secret(secret_arn)
    return make_conninfo(
        host=settings.db_host or secret["host"],
        port=secret.get("port", 5432),
        dbname=settings.db_name,
        user=secret["username"],
        password=secret["password"],
        sslmode="require",
    )


def secret_password(secret_arn: str) -> str:
    """The password of a database secret (the service role's, which the migrations set)."""
    return str(_database_secret(secret_arn)["password"])


def _database_secret(secret_arn: str) -> dict:
    from aws_lambda_powertools.utilities import parameters

    return json.loads(parameters.get_secret(secret_arn))


def clear_caches() -> None:
    """Forget the secrets read (tests)."""
    try:
        from aws_lambda_powertools.utilities.parameters.base import clear_caches as clear
    except ImportError:
        return
    clear()
