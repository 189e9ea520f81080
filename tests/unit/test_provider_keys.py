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
    calls: list[str] = []
    client = secrets._secrets_provider().client
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

    store = secrets._secrets_provider().store
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


def test_a_missing_secret_is_a_503_that_says_it_could_not_be_read(secretsmanager, monkeypatch):
    keys = provider_keys("arn:aws:secretsmanager:us-east-1:123456789012:secret:gligabao/absent-AbCdEf")

    assert keys.all() == {}
    assert not keys.llm_configured()
    with pytest.raises(NotConfigured) as raised:
        keys.require("ANTHROPIC_API_KEY")
    assert raised.value.status == 503
    assert str(raised.value) == (
        "LLM not configured: ANTHROPIC_API_KEY could not be read: "
        "the provider-keys secret could not be read (ResourceNotFoundException)"
    )
    with pytest.raises(NotConfigured, match=r"OPENAI_API_KEY could not be read: .*ResourceNotFoundException"):
        keys.require("OPENAI_API_KEY")


@pytest.mark.parametrize("payload", ["not json at all", json.dumps(["ANTHROPIC_API_KEY"]), "null"])
def test_a_malformed_secret_is_a_503_that_says_so(secretsmanager, monkeypatch, payload):
    arn = _create(secretsmanager, payload)
    keys = provider_keys(arn)
    assert keys.all() == {}
    assert keys.unreadable() == "the provider-keys secret is not a JSON object"
    with pytest.raises(NotConfigured, match=r"OPENAI_API_KEY could not be read: .* not a JSON object"):
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


# --- a secret the container cannot read is a 503 with the reason, logged; never "not set" ---------


def _user_without_permissions(iam) -> dict[str, str]:
    iam.create_user(UserName="no-secrets")
    key = iam.create_access_key(UserName="no-secrets")["AccessKey"]
    return {"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}


def test_access_denied_is_a_503_naming_the_error_and_is_logged(aws_env, monkeypatch, caplog):
    from moto.core import set_initial_no_auth_action_count

    @set_initial_no_auth_action_count(3)  # the set-up's calls are free; then IAM is enforced
    def scenario():
        client = boto3.client("secretsmanager", region_name="us-east-1")
        arn = _create(client, {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": OPENAI})
        for name, value in _user_without_permissions(boto3.client("iam", region_name="us-east-1")).items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("AWS_SESSION_TOKEN")
        monkeypatch.delenv("AWS_SECURITY_TOKEN")
        keys = provider_keys(arn)
        with caplog.at_level("ERROR", logger="gligabao.aws.secrets"), pytest.raises(NotConfigured) as raised:
            keys.require("ANTHROPIC_API_KEY")
        return arn, raised.value

    with mock_aws():
        arn, error = scenario()

    assert error.status == 503
    # AWS answers AccessDeniedException; moto's answer is a 403 botocore cannot parse.
    assert str(error) == (
        "LLM not configured: ANTHROPIC_API_KEY could not be read: "
        "the provider-keys secret could not be read (access denied (HTTP 403))"
    )
    [record] = [r for r in caplog.records if r.name == "gligabao.aws.secrets"]
    assert record.getMessage() == "provider-keys secret unreadable"
    assert (record.secret_arn, record.error) == (arn, "access denied (HTTP 403)")
    assert ANTHROPIC not in caplog.text and OPENAI not in caplog.text


def test_a_failed_read_is_tried_again_after_a_short_wait_not_on_every_request(secretsmanager, monkeypatch):
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gligabao/later-AbCdEf"
    keys = provider_keys(arn)
    calls = _count_get_secret_value_calls()
    unreadable = "the provider-keys secret could not be read (ResourceNotFoundException)"
    assert keys.unreadable() == unreadable
    assert keys.unreadable() == unreadable  # remembered, not read again
    assert len(calls) == 1  # the failure is remembered for SECRET_FAILURE_RETRY_SECONDS

    real = _create(secretsmanager, {"OPENAI_API_KEY": OPENAI}, name="gligabao/later")
    keys = provider_keys(real)
    assert keys.require("OPENAI_API_KEY") == OPENAI
    clock = secrets.time.monotonic() + secrets.SECRET_FAILURE_RETRY_SECONDS + 1
    monkeypatch.setattr(secrets.time, "monotonic", lambda: clock)
    assert provider_keys(arn).unreadable() == unreadable  # still absent
    assert len(calls) == 3  # the absent secret again after the wait, the real one once


def test_a_rotated_key_rebuilds_the_client_within_the_cache_time(secretsmanager, monkeypatch):
    from gligabao.bootstrap import Bundle
    from gligabao.settings import Settings

    arn = _create(secretsmanager, {"ANTHROPIC_API_KEY": ANTHROPIC, "OPENAI_API_KEY": OPENAI})
    deps = Bundle(Settings(secrets_arn=arn))
    llm, embedder = deps.llm, deps.embedder
    assert deps.llm is llm and deps.embedder is embedder  # kept while the key is the same

    secretsmanager.put_secret_value(
        SecretId=arn,
        SecretString=json.dumps({"ANTHROPIC_API_KEY": "sk-ant-rotated", "OPENAI_API_KEY": OPENAI}),
    )
    assert deps.llm is llm  # within the cache time the container still uses the old key
    store = secrets._secrets_provider().store
    ((key, item),) = store.items()
    store[key] = item._replace(ttl=datetime.now() - timedelta(seconds=1))  # the cache time has passed

    assert deps.llm is not llm  # rebuilt with the rotated key
    assert deps.embedder is embedder  # its key did not change


def test_the_reason_is_the_aws_error_code_never_the_message(aws_env):
    from botocore.stub import Stubber

    provider = secrets._secrets_provider()
    with Stubber(provider.client) as stub:
        stub.add_client_error(
            "get_secret_value",
            service_error_code="AccessDeniedException",
            service_message="User: arn:... is not",
        )
        keys = provider_keys("arn:aws:secretsmanager:us-east-1:123456789012:secret:gligabao/keys-AbCdEf")
        assert keys.unreadable() == "the provider-keys secret could not be read (AccessDeniedException)"
