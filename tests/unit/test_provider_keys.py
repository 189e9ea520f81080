"""Provider keys (SPEC section 3): from the Secrets Manager secret named by GB_SECRETS_ARN on
Lambda (cached per container), else from the environment; a missing key is a 503, never a crash."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import boto3
import pytest
from aws_helpers import provider_keys
from moto import mock_aws

from gligabao.aws import secrets
from gligabao.errors import NotConfigured

ANTHROPIC = "sk-ant-api03-test-anthropic-key-0000000000"
OPENAI = "sk-proj-test-openai-key-00000000000000000"


@pytest.fixture
def secretsmanager(aws_env):
    with mock_aws():
        yield boto3.client("secretsmanager", region_name="us-east-1")


def _create(client, payload, name: str = "gligabao/provider-keys") -> str:
    value = payload if isinstance(payload, str) else json.dumps(payload)
    return client.create_secret(Name=name, SecretString=value)["ARN"]


def _count_get_secret_value_calls() -> list[str]:
    """Counts the GetSecretValue calls of the Powertools secrets provider's client from now on."""
    from aws_lambda_powertools.utilities.parameters.constants import DEFAULT_PROVIDERS

    calls: list[str] = []
    client = DEFAULT_PROVIDERS["secrets"].client
    client.meta.events.register(
        "before-call.secrets-manager.GetSecretValue", lambda **kwargs: calls.append(kwargs["model"].name)
    )
    return calls


def test_keys_come_from_the_secret(secretsmanager, monkeypatch):
    arn = _create(secretsmanager, {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": OPENAI})
    keys = provider_keys(arn)

    assert keys.all() == {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": OPENAI}
    assert keys.require("ANTHROPIC_API_KEY") == ANTHROPIC
    assert keys.require("OPENAI_API_KEY") == OPENAI
    assert keys.llm_configured()


def test_secret_is_read_once_per_container(secretsmanager, monkeypatch):
    arn = _create(secretsmanager, {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": OPENAI})
    keys = provider_keys(arn)
    assert keys.all()["ANTHROPIC_API_KEY"] == ANTHROPIC

    calls = _count_get_secret_value_calls()
    secretsmanager.put_secret_value(
        SecretId=arn,
        SecretString=json.dumps({"ANTHROPIC_API_KEY": "sk-ant-rotated", "OPENAI_API_KEY": OPENAI}),
    )
    for _ in range(3):
        assert keys.all() == {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": OPENAI}
        assert keys.require("OPENAI_API_KEY") == OPENAI
    assert calls == []  # served from the container's cache, no AWS call

    # A new container (or the cache's max age) reads the rotated value.
    secrets.clear_caches()
    assert keys.all()["ANTHROPIC_API_KEY"] == "sk-ant-rotated"


def test_cached_value_expires_after_max_age(secretsmanager, monkeypatch):
    arn = _create(secretsmanager, {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": OPENAI})
    keys = provider_keys(arn)
    before = datetime.now()
    assert keys.all()["ANTHROPIC_API_KEY"] == ANTHROPIC
    rotated = json.dumps({"ANTHROPIC_API_KEY": "sk-ant-rotated"})
    secretsmanager.put_secret_value(SecretId=arn, SecretString=rotated)

    from aws_lambda_powertools.utilities.parameters.constants import DEFAULT_PROVIDERS

    store = DEFAULT_PROVIDERS["secrets"].store
    assert len(store) == 1, "the secret value is cached by the Powertools provider"
    ((key, item),) = store.items()
    # cached for SECRETS_CACHE_SECONDS
    expected = before + timedelta(seconds=secrets.SECRETS_CACHE_SECONDS)
    assert abs((item.ttl - expected).total_seconds()) < 5
    assert keys.all()["ANTHROPIC_API_KEY"] == ANTHROPIC

    store[key] = item._replace(ttl=datetime.now() - timedelta(seconds=1))  # as if the max age had passed
    assert keys.all() == {"ANTHROPIC_API_KEY": "sk-ant-rotated"}


def test_secret_missing_a_key_is_503_for_that_key(secretsmanager, monkeypatch):
    arn = _create(secretsmanager, {"ANTHROPIC_API_KEY": ANTHROPIC})
    keys = provider_keys(arn)

    assert keys.all() == {"ANTHROPIC_API_KEY": ANTHROPIC}
    assert keys.require("ANTHROPIC_API_KEY") == ANTHROPIC
    with pytest.raises(NotConfigured) as raised:
        keys.require("OPENAI_API_KEY")
    assert str(raised.value) == "embeddings not configured: OPENAI_API_KEY is not set"
    assert raised.value.message == "embeddings not configured: OPENAI_API_KEY is not set"
    assert raised.value.status == 503


def test_empty_values_in_the_secret_count_as_missing(secretsmanager, monkeypatch):
    arn = _create(secretsmanager, {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": OPENAI, "OTHER": "ignored"})
    keys = provider_keys(arn)

    assert keys.all() == {"OPENAI_API_KEY": OPENAI}
    with pytest.raises(NotConfigured) as raised:
        keys.require("ANTHROPIC_API_KEY")
    assert str(raised.value) == "LLM not configured: ANTHROPIC_API_KEY is not set"
    assert raised.value.status == 503
    assert not keys.llm_configured()


def test_missing_secret_does_not_crash(secretsmanager, monkeypatch):
    keys = provider_keys("arn:aws:secretsmanager:us-east-1:123456789012:secret:gligabao/absent-AbCdEf")

    assert keys.all() == {}
    assert not keys.llm_configured()
    with pytest.raises(NotConfigured, match="LLM not configured: ANTHROPIC_API_KEY is not set"):
        keys.require("ANTHROPIC_API_KEY")
    with pytest.raises(NotConfigured, match="embeddings not configured: OPENAI_API_KEY is not set"):
        keys.require("OPENAI_API_KEY")


@pytest.mark.parametrize("payload", ["not json at all", json.dumps(["ANTHROPIC_API_KEY"]), "null"])
def test_malformed_secret_does_not_crash(secretsmanager, monkeypatch, payload):
    arn = _create(secretsmanager, payload)
    keys = provider_keys(arn)
    assert keys.all() == {}
    with pytest.raises(NotConfigured):
        keys.require("OPENAI_API_KEY")


def test_secret_overrides_environment_and_environment_fills_gaps(secretsmanager, monkeypatch):
    arn = _create(secretsmanager, {"ANTHROPIC_API_KEY": ANTHROPIC})
    keys = provider_keys(arn, ANTHROPIC_API_KEY="sk-ant-from-env", OPENAI_API_KEY="sk-openai-from-env")

    assert keys.all() == {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": "sk-openai-from-env"}


def test_environment_without_secret_arn():
    keys = provider_keys(ANTHROPIC_API_KEY=ANTHROPIC)

    assert keys.all() == {"ANTHROPIC_API_KEY": ANTHROPIC}
    assert keys.require("ANTHROPIC_API_KEY") == ANTHROPIC
    assert keys.llm_configured()
    with pytest.raises(NotConfigured) as raised:
        keys.require("OPENAI_API_KEY")
    assert str(raised.value) == "embeddings not configured: OPENAI_API_KEY is not set"
    assert raised.value.status == 503


def test_no_keys_anywhere_is_not_a_crash():
    keys = provider_keys()

    assert keys.all() == {}
    assert not keys.llm_configured()
    with pytest.raises(NotConfigured, match=r"^LLM not configured: ANTHROPIC_API_KEY is not set$"):
        keys.require("ANTHROPIC_API_KEY")


def test_bedrock_needs_no_anthropic_key():
    assert provider_keys(GB_LLM_PROVIDER="bedrock").llm_configured()
