"""Provider keys (SPEC section 3) when Secrets Manager cannot be reached: the environment still
counts, the failure is quick, never a crash, and the 503 says the secret could not be read."""

from __future__ import annotations

import time

import pytest
from aws_helpers import provider_keys

from gligabao.errors import NotConfigured

OPENAI = "sk-proj-test-openai-key-00000000000000000"


def test_unreachable_secrets_manager_does_not_crash(aws_env, monkeypatch):
    # No mock: an endpoint where nothing listens, one attempt only.
    monkeypatch.setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AWS_RETRY_MODE", "standard")
    keys = provider_keys(
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:gligabao/keys-AbCdEf", OPENAI_API_KEY=OPENAI
    )

    started = time.monotonic()
    assert keys.all() == {"OPENAI_API_KEY": OPENAI}  # the environment still counts
    assert time.monotonic() - started < 30
    with pytest.raises(NotConfigured) as raised:
        keys.require("ANTHROPIC_API_KEY")
    assert str(raised.value).startswith(
        "LLM not configured: ANTHROPIC_API_KEY could not be read: the provider-keys secret could not be read ("
    )
    assert "is not set" not in str(raised.value)
