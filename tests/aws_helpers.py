"""Helpers of the tests of the AWS side (the provider keys' secret): fake credentials, so nothing
can ever reach a real AWS account, and the provider keys of a container with a given environment."""

from __future__ import annotations

import pytest


@pytest.fixture
def aws_env(monkeypatch):
    """Fake credentials, so nothing here can ever reach a real AWS account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SECRETS_MANAGER"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _fresh_secret_cache():
    """Each test reads the secret as a new container would."""
    from gligabao.aws import secrets

    secrets.clear_caches()
    yield
    secrets.clear_caches()


def provider_keys(arn: str | None = None, **env: str):
    """The provider keys of a container whose environment is `env` (and GB_SECRETS_ARN=arn)."""
    from gligabao.aws.secrets import ProviderKeys
    from gligabao.settings import Settings

    return ProviderKeys(Settings.from_env({**env, **({"GB_SECRETS_ARN": arn} if arn else {})}))
