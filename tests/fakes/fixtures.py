"""Fixtures for the fake model providers: real local HTTP servers the real SDKs talk to.

One server of each per test session; each test gets it emptied (no queued replies,
no recorded requests) with the provider's key and base URL in the environment.
"""

from __future__ import annotations

import pytest

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
def fake_anthropic(anthropic_server, monkeypatch) -> FakeAnthropic:
    from gligabao import config

    anthropic_server.reset()
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    config.reset_caches()
    yield anthropic_server
    anthropic_server.reset()


@pytest.fixture
def fake_openai(openai_server, monkeypatch) -> FakeOpenAI:
    from gligabao import config

    openai_server.reset()
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_TEST_KEY)
    # The openai SDK's base URL includes the API version; Anthropic's does not.
    monkeypatch.setenv("OPENAI_BASE_URL", f"{openai_server.url}/v1")
    config.reset_caches()
    yield openai_server
    openai_server.reset()
