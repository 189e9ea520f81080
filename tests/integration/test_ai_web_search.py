"""The web search stage through the real `anthropic` SDK against the local fake Messages API: the
request's tools entry, the reply's searches read back, the inference (stage web_search, its
searches, its cost with their fee) saved to gb_inferences, and a provider's failure mapped as for
every stage. Then the key entities of a remember searched at once (memory/web_search.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import reconfigure
from fakes.anthropic_server import FakeSearch, Reply, citation, search_result, web_search_reply
from pydantic import SecretStr
from remember_helpers import stored_edge, stored_entity

from gligabao import bootstrap
from gligabao.ai.prices import cost_usd
from gligabao.ai.web_search import SearchSubject, search_the_web, web_search_llm
from gligabao.errors import NotConfigured, ProviderError
from gligabao.limits import Limits
from gligabao.memory.web_search import require_web_search, web_search_texts
from gligabao.observability.inferences import CallContext, save_inferences

TODAY = datetime(2026, 12, 7, tzinfo=UTC).date()
ACME = SearchSubject("Acme", "organization", "a firm")
CEO_PAGE = search_result("https://news.example.com/acme-ceo", "Acme names new CEO", "May 3, 2025")
Q1_PAGE = search_result("https://biz.example.org/acme-q1", "Acme Q1 results")
BRIEFING = "Carol Smith became the CEO of Acme in May 2025."


@pytest.fixture
def call() -> CallContext:
    return CallContext(user_id="u1", type="remember", session_id="s", request_id="req-ws")


def search(call, subject=ACME, **options):
    options.setdefault("today", TODAY)
    options.setdefault("max_uses", bootstrap.bundle().limits.web_search_max_uses)
    return search_the_web(web_search_llm(bootstrap.bundle().llm), call, subject, **options)


def script_acme(fake_anthropic, **options):
    fake_anthropic.script_web_search(
        "about Acme",
        FakeSearch("Acme latest news", [CEO_PAGE, Q1_PAGE]),
        FakeSearch("Acme CEO", [CEO_PAGE]),
        texts=[(BRIEFING, [citation(CEO_PAGE["url"], CEO_PAGE["title"])])],
        **options,
    )


def test_the_request_carries_the_web_search_tool_with_max_uses_and_the_prompt(fake_anthropic, call):
    reconfigure(limits=Limits(web_search_max_uses=2))
    script_acme(fake_anthropic)
    search(call)

    [request] = fake_anthropic.requests
    body = request.body
    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]
    assert body["model"] == "claude-haiku-5-5" and body["max_tokens"] == 1500
    assert body["messages"][0]["content"] == (
        "<today>2026-12-07</today>\n<query>latest world events and news about Acme (organization)</query>\n"
        "<entity>\nname: Acme\ntype: organization\ndescription: a firm\n</entity>"
    )
    assert "output_config" not in body and body["thinking"] == {"type": "disabled"}
    assert request.headers["x-gligabao-stage"] == "web_search"


def test_the_reply_is_read_into_its_searches_briefing_and_sources(fake_anthropic, call):
    script_acme(fake_anthropic)
    findings = search(call)

    assert [(s.query, [p.url for p in s.results], s.error) for s in findings.searches] == [
        ("Acme latest news", [CEO_PAGE["url"], Q1_PAGE["url"]], None),
        ("Acme CEO", [CEO_PAGE["url"]], None),
    ]
    assert findings.text == BRIEFING and findings.found
    assert [p.as_source() for p in findings.sources] == [
        {"url": CEO_PAGE["url"], "title": CEO_PAGE["title"], "page_age": "May 3, 2025"}
    ]
    assert call.inferences[-1].web_searches == 2


def test_the_inference_has_its_stage_its_searches_and_their_fee_in_its_cost(fake_anthropic, call, db):
    script_acme(fake_anthropic, usage={"input_tokens": 1500, "output_tokens": 120})
    findings = search(call)

    [inference] = call.inferences
    assert (inference.stage, inference.model, inference.reasoning, inference.ok) == (
        "web_search",
        "claude-haiku-5-5",
        "none",
        True,
    )
    assert inference.web_searches == 2
    assert inference.cost_usd == pytest.approx(cost_usd("claude-haiku-5-5", 1500, 120) + 2 * 0.01)
    assert inference.cost_usd == pytest.approx(0.02021)  # 1500 x 0.10/1M + 120 x 0.50/1M + 2 x 0.01
    assert findings.cost_usd == inference.cost_usd

    save_inferences(db, call)
    row = db.execute(
        "SELECT stage, model, input_tokens, output_tokens, web_searches, cost_usd::float8, ok, request_id"
        " FROM gb_inferences"
    ).fetchone()
    assert row == ("web_search", "claude-haiku-5-5", 1500, 120, 2, pytest.approx(0.02021), True, "req-ws")


def test_other_stages_record_no_web_search(fake_anthropic, call, db):
    from pydantic import BaseModel

    class Nothing(BaseModel):
        pass

    fake_anthropic.queue({})
    bootstrap.bundle().llm.complete(call, "extract", system="s", content="c", reply_model=Nothing)
    save_inferences(db, call)
    assert call.inferences[0].web_searches is None
    assert db.execute("SELECT stage, web_searches FROM gb_inferences").fetchall() == [("extract", None)]


def test_the_stage_model_is_the_requests(fake_anthropic, call):
    script_acme(fake_anthropic)
    search(call, model="claude-sonnet-4-5")
    assert fake_anthropic.messages[-1]["model"] == "claude-sonnet-4-5"
    assert call.inferences[-1].model == "claude-sonnet-4-5"


def test_searches_past_max_uses_are_refused_by_the_tool_and_not_billed(fake_anthropic, call):
    fake_anthropic.script_web_search(
        "about Acme", FakeSearch("q1", [CEO_PAGE]), FakeSearch("q2"), FakeSearch("q3"), texts=[BRIEFING]
    )
    findings = search(call, max_uses=2)

    assert [s.error for s in findings.searches] == [None, None, "max_uses_exceeded"]
    assert call.inferences[-1].web_searches == 2


def test_an_unavailable_search_is_reported_and_nothing_found_is_no_text(fake_anthropic, call):
    fake_anthropic.script_web_search(
        "about Acme", FakeSearch("q1", error_code="unavailable"), texts=["NO_RESULTS"]
    )
    findings = search(call)

    assert [(s.query, s.error) for s in findings.searches] == [("q1", "unavailable")]
    assert not findings.found
    assert call.inferences[-1].ok is True and call.inferences[-1].web_searches == 0


def test_unscripted_the_fake_searches_once_and_finds_nothing(fake_anthropic, call):
    findings = search(call)
    assert [s.query for s in findings.searches] == ["latest world events and news about Acme (organization)"]
    assert not findings.found


def test_a_server_error_after_the_retries_is_a_502_recorded_once(fake_anthropic, call):
    fake_anthropic.queue(Reply.error(500), times=3)
    with pytest.raises(ProviderError, match=r"HTTP 500 api_error .* after 3 attempts") as raised:
        search(call)
    assert raised.value.status == 502
    assert len(fake_anthropic.requests) == 3
    [inference] = call.inferences
    assert (inference.stage, inference.ok, inference.web_searches, inference.cost_usd) == (
        "web_search",
        False,
        None,
        None,
    )
    assert "HTTP 500" in inference.error


def test_an_overloaded_provider_is_retried(fake_anthropic, call):
    fake_anthropic.queue(Reply.error(529))
    script_acme(fake_anthropic)
    assert search(call).found
    assert len(fake_anthropic.requests) == 2


def test_a_refusal_is_a_502_whose_searches_are_still_billed(fake_anthropic, call):
    fake_anthropic.queue(
        web_search_reply([FakeSearch("q1", [CEO_PAGE])], ["I can't help with that."], stop_reason="refusal")
    )
    with pytest.raises(ProviderError, match="refused to answer stage web_search") as raised:
        search(call)
    assert raised.value.status == 502
    [inference] = call.inferences
    assert inference.ok is False and inference.web_searches == 1
    assert inference.cost_usd == pytest.approx(
        cost_usd("claude-haiku-5-5", inference.input_tokens, inference.output_tokens) + 0.01
    )


def test_a_broken_body_is_a_502_naming_the_problem(fake_anthropic, call):
    fake_anthropic.queue(Reply(content=[{"text": "no type"}]))
    with pytest.raises(ProviderError, match=r"was not a Messages API reply: content\.0\.type"):
        search(call)


def test_without_a_key_or_with_another_provider_web_search_is_a_503():
    with pytest.raises(NotConfigured, match="ANTHROPIC_API_KEY is not set"):
        require_web_search(bootstrap.bundle())
    reconfigure(llm_provider="offline")
    with pytest.raises(NotConfigured, match="web search is not available"):
        require_web_search(bootstrap.bundle())
    reconfigure(llm_provider="anthropic", anthropic_api_key=SecretStr("sk-ant-x"))
    require_web_search(bootstrap.bundle())  # no call made


# --- the key entities of a remember, searched at once ---------------------------------------------


def test_the_key_entities_are_searched_each_in_its_own_call(fake_anthropic, call):
    script_acme(fake_anthropic)
    fake_anthropic.script_web_search("about Bob", FakeSearch("Bob", error_code="too_many_requests"))
    alice, acme, bob, idea = (
        stored_entity(1, "Alice"),
        stored_entity(2, "Acme", "organization", "a firm"),
        stored_entity(3, "Bob"),
        stored_entity(4, "Zeta", "concept"),
    )
    edges = [
        stored_edge(1, 2),
        stored_edge(1, 4),
        stored_edge(3, 4),
        stored_edge(3, 1),
        stored_edge(2, 4),
    ]  # Alice 3, Bob 2, Acme 2
    texts = web_search_texts(
        bootstrap.bundle(), call, [idea, acme, bob, alice], edges, model="claude-sonnet-4-5"
    )

    assert [t.entity.name for t in texts] == ["Alice", "Acme", "Bob"]
    assert sorted(
        body["messages"][0]["content"].split("<query>")[1].split("</query>")[0]
        for body in fake_anthropic.web_search_requests
    ) == [
        "latest world events and news about Acme (organization)",
        "latest world events and news about Alice (person)",
        "latest world events and news about Bob (person)",
    ]
    assert {body["model"] for body in fake_anthropic.messages} == {"claude-sonnet-4-5"}
    alice_text, acme_text, bob_text = texts
    assert alice_text.text is None and alice_text.error is None  # unscripted: nothing found
    assert acme_text.text == f"{BRIEFING}\n\nSources:\n- Acme names new CEO <{CEO_PAGE['url']}> (May 3, 2025)"
    assert acme_text.briefing == BRIEFING and acme_text.searches == ("Acme latest news", "Acme CEO")
    assert bob_text.text is None and bob_text.searches  # its one search the tool could not run
    assert sorted(i.stage for i in call.inferences) == ["web_search"] * 3
    assert sum(i.web_searches for i in call.inferences) == 1 + 2 + 0


def test_a_failed_search_leaves_the_others_standing(fake_anthropic, call):
    script_acme(fake_anthropic)
    fake_anthropic.responder = lambda body: (
        Reply.error(400) if "about Alice" in str(body["messages"]) else None
    )
    texts = web_search_texts(
        bootstrap.bundle(), call, [stored_entity(1, "Alice"), stored_entity(2, "Acme", "organization")], []
    )

    alice_text, acme_text = texts
    assert alice_text.text is None and "HTTP 400 invalid_request_error" in alice_text.error
    assert acme_text.text is not None and acme_text.error is None
    assert sorted(i.ok for i in call.inferences) == [False, True]
