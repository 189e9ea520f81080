"""GET /v1/gb/health: 200 with the database state and the configured providers."""

from conftest import reconfigure


def test_health_names_the_missing_provider_keys(api):
    reply = api.get("/v1/gb/health")

    assert reply.status == 200
    body = reply.json
    assert body["database"]["ok"] is True and body["database"]["schema_version"] >= 1
    assert body["providers"] == {"anthropic": {"configured": False}, "openai": {"configured": False}}
    assert body["missing"] == ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]


def test_health_with_keys_reports_providers_configured_and_never_the_keys(api):
    reconfigure(anthropic_api_key="sk-ant-api03-secret-value", openai_api_key="sk-proj-secret-value")

    reply = api.get("/v1/gb/health")

    assert reply.json["providers"] == {"anthropic": {"configured": True}, "openai": {"configured": True}}
    assert reply.json["missing"] == []
    assert b"secret-value" not in reply.raw
