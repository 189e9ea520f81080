"""Fixtures for the fake model providers: real local HTTP servers the real SDKs talk to.

One server of each per test session; each test gets it emptied (no queued replies,
no recorded requests) with the provider's key and base URL in the bundle's settings.
"""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI

ANTHROPIC_TEST_KEY = "sk-ant-test-key"
OPENAI_TEST_KEY = "sk-test-key"


@pytest.fixture(scope="session")
def anthropic_server():
    server = FakeAnthropic().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def openai_server():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def fake_anthropic(anthropic_server, memory_bundle) -> FakeAnthropic:
    """The Anthropic fake, emptied, with the bundle's LLM pointed at it."""
    from conftest import reconfigure

    anthropic_server.reset()
    reconfigure(anthropic_api_key=SecretStr(ANTHROPIC_TEST_KEY), anthropic_base_url=anthropic_server.url)
    yield anthropic_server
    anthropic_server.reset()


@pytest.fixture
def fake_openai(openai_server, memory_bundle) -> FakeOpenAI:
    """The OpenAI fake, emptied, with the bundle's embedder pointed at it."""
    from conftest import reconfigure

    openai_server.reset()
    # The openai SDK's base URL includes the API version; Anthropic's does not.
    reconfigure(openai_api_key=SecretStr(OPENAI_TEST_KEY), openai_base_url=f"{openai_server.url}/v1")
    yield openai_server
    openai_server.reset()
