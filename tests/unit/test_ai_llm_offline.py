"""The LLM client without a provider (SPEC section 8): a missing key, Bedrock, and the provider
SDKs imported only on first use."""

import subprocess
import sys

import pytest
from conftest import reconfigure

from gligabao import bootstrap
from gligabao.errors import NotConfigured


def test_a_missing_key_is_not_configured():
    with pytest.raises(NotConfigured) as raised:
        _ = bootstrap.bundle().llm
    assert raised.value.status == 503
    assert raised.value.message == "LLM not configured: ANTHROPIC_API_KEY is not set"


def test_bedrock_needs_no_key(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # the AWS SDK's own configuration
    llm = reconfigure(llm_provider="bedrock").llm
    assert llm.provider == "bedrock"
    assert type(llm.client).__name__ == "AnthropicBedrock"


def test_importing_the_ai_modules_imports_no_provider_sdk():
    code = (
        "import sys\n"
        "import gligabao.ai.llm, gligabao.ai.embeddings, gligabao.ai.snapstart, gligabao.ai.stages\n"
        "import gligabao.bootstrap\n"
        "print(sorted(m for m in ('anthropic', 'openai', 'httpx', 'httpx2') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
