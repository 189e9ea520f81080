"""Helpers of the tests of the AWS side (the provider keys' secret): fake credentials, so nothing
can ever reach a real AWS account, and the secret named to the configuration."""

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


def use_secret(monkeypatch, arn: str) -> None:
    from gligabao import config

    monkeypatch.setenv("GB_SECRETS_ARN", arn)
    config.reset_caches()
