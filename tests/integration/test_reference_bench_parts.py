"""The parts of the reference bench (bench/reference.py) that run without the reference's binary:
the TLS-terminating proxy hands a real SDK's HTTPS call to a fake with the CA made for the run, and
the fake model answers the reference's prompts as it answers ours."""

from __future__ import annotations

import ssl
import sys
from pathlib import Path

import anthropic
import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import reference
from fakes.anthropic_server import FakeAnthropic
from tls_proxy import CertificateAuthority, TlsTerminatingProxy


@pytest.fixture
def proxied_anthropic(tmp_path):
    """The Anthropic fake behind the proxy, and the CA a client must trust."""
    fake = FakeAnthropic().start()
    authority = CertificateAuthority.make(tmp_path, ["api.anthropic.com", "api.openai.com"])
    proxy = TlsTerminatingProxy({"api.anthropic.com": fake.url}, authority).start()
    yield fake, proxy, authority
    proxy.stop()
    fake.stop()


def test_the_proxy_hands_an_sdk_call_over_tls_to_the_fake(proxied_anthropic):
    fake, proxy, authority = proxied_anthropic
    fake.responder = lambda body: {"answer": "hello"}
    trusted = ssl.create_default_context(cafile=str(authority.ca_file))
    with httpx2.Client(proxy=proxy.url, verify=trusted) as http:
        client = anthropic.Anthropic(api_key="sk-ant-proxied", http_client=http, max_retries=0)
        for _ in range(2):  # the second over the same tunnel
            message = client.messages.create(
                model="claude-haiku-5-5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
            )
            assert message.content[0].text == '{"answer": "hello"}'

    assert [m["messages"][0]["content"] for m in fake.messages] == ["Hi", "Hi"]
    assert fake.requests[0].headers["host"] == "api.anthropic.com"
    proxy.settle()
    assert proxy.forwarded == 2 and 0 < proxy.busy_seconds < proxy.round_trip_seconds


def test_a_client_that_does_not_trust_the_ca_is_refused(proxied_anthropic):
    _, proxy, _ = proxied_anthropic
    with httpx2.Client(proxy=proxy.url) as http, pytest.raises(httpx2.ConnectError):
        http.get("https://api.anthropic.com/v1/models")


def test_a_host_without_an_upstream_gets_no_tunnel(proxied_anthropic):
    _, proxy, authority = proxied_anthropic
    trusted = ssl.create_default_context(cafile=str(authority.ca_file))
    with httpx2.Client(proxy=proxy.url, verify=trusted) as http, pytest.raises(httpx2.ProxyError):
        http.get("https://example.com/")
    assert proxy.forwarded == 0


# --- the reference's prompts (as gligabao-server 0.108.1 sends them) ---------------------------

EXTRACT = {
    "system": reference.REFERENCE_EXTRACT + "\n\nThe text was written or observed at <reference_time>.",
    "messages": [
        {
            "role": "user",
            "content": "<reference_time>\n2026-12-03T18:39:36Z\n</reference_time>\n\n"
            "<text>\nPerson1 knows Person2. Person3 works at Acme.\n</text>",
        }
    ],
}
GRAPH = (
    "<current_time>\n2026-12-03T18:39:37Z\n</current_time>\n\n<graph>\n[entity 7] Person7 (person)\n"
    "[edge 12] Person7(7) --knows--> Person8(8): Person7 knows Person8. [valid_at=2026-12-03T18:39:36Z]\n"
    "</graph>\n\n<question>\nWho does Person7 know?\n</question>"
)


def test_the_reference_extraction_is_the_rule_based_models():
    reply = reference.BothModels()(EXTRACT)

    assert [(e["source"], e["relation"], e["target"]) for e in reply["edges"]] == [
        ("Person1", "knows", "Person2"),
        ("Person3", "works_at", "Acme"),
    ]


def test_the_reference_answer_cites_the_asked_fact_when_its_context_holds_it():
    model = reference.BothModels()
    body = {"system": reference.REFERENCE_ANSWER + " given in <graph>.", "messages": []}

    held = model({**body, "messages": [{"role": "user", "content": GRAPH}]})
    assert held == {"answer": "Person7 knows Person8.", "entities": [], "edges": [12]}
    assert model.asked_fact_seen is True

    missing = model(
        {**body, "messages": [{"role": "user", "content": GRAPH.replace("Person8.", "Person9.")}]}
    )
    assert missing["answer"] == reference.NOT_IN_MEMORY and missing["edges"] == []
    assert model.asked_fact_seen is False


def test_the_reference_resolution_finds_duplicates_by_their_wording():
    prompt = (
        "<new_facts>\n[0] Person3 lives in Paris. (2026-12-03T18:39:37Z -> ?)\n"
        "[1] Person1 knows Person2. (2026-12-03T18:39:37Z -> ?)\n</new_facts>\n\n"
        "<existing_facts>\n[3] Person3 works at Acme. (2026-12-03T18:39:36Z -> ?)\n"
        "[1] Person1 knows Person2. (2026-12-03T18:39:36Z -> ?)\n</existing_facts>"
    )

    assert reference.reference_resolution(prompt) == {
        "duplicates": [{"new": 1, "existing": 1}],
        "contradictions": [],
    }
