"""The web search stage's reply read into findings (ai/web_search.py), and the findings turned into
texts to remember (memory/web_search.py): which entities are searched, the artifact's text and
its sources, a search that failed. No socket: replies are bodies, the searcher a stand-in."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from fakes.anthropic_server import FakeAnthropic, FakeSearch, citation, search_result, web_search_reply
from remember_helpers import stored_edge, stored_entity

from gligabao.ai.llm import messages_reply, web_searches_billed
from gligabao.ai.prices import WEB_SEARCH_USD_PER_SEARCH, cost_usd, web_search_cost_usd
from gligabao.ai.prompts.web_search import user_message
from gligabao.ai.stages import REMEMBER_MODEL_STAGES, REMEMBER_STAGES, parse_models, parse_reasoning
from gligabao.ai.web_search import (
    FoundPage,
    SearchSubject,
    WebFindings,
    WebSearchReply,
    findings_of,
    search_request,
    web_search_llm,
)
from gligabao.errors import BadRequest, NotConfigured, ProviderError
from gligabao.limits import Limits
from gligabao.memory.web_search import findings_text, key_entities, require_web_search, web_search_texts
from gligabao.observability.inferences import CallContext

QUERY = "latest world events and news about Acme (organization)"

# The reply of the gligabao server's probe (REFERENCE.md section 6.3), as the API sends it.
REFERENCE_REPLY = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-5-5",
    "content": [
        {"type": "text", "text": "I'll search for the latest news."},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_01",
            "name": "web_search",
            "input": {"query": "Acme latest news"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01",
            "content": [
                {
                    "type": "web_search_result",
                    "url": "https://news.example.com/acme-ceo",
                    "title": "Acme names new CEO",
                    "page_age": "May 3, 2025",
                    "encrypted_content": "...",
                },
                {
                    "type": "web_search_result",
                    "url": "https://biz.example.org/acme-q1",
                    "title": "Acme Q1 results",
                    "page_age": None,
                    "encrypted_content": "...",
                },
            ],
        },
        {
            "type": "text",
            "text": "Carol Smith became the CEO of Acme in May 2025.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": "https://news.example.com/acme-ceo",
                    "title": "Acme names new CEO",
                    "encrypted_index": "...",
                    "cited_text": "...",
                }
            ],
        },
        {"type": "text", "text": " Acme reported record revenue in Q1 2025."},
    ],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1500, "output_tokens": 120, "server_tool_use": {"web_search_requests": 1}},
}


def message_of(body: dict) -> WebSearchReply:
    return messages_reply(json.dumps(body).encode(), "web_search", WebSearchReply)


def read(body: dict, cost: float | None = None) -> WebFindings:
    return findings_of(message_of(body), cost)


def billed(body: dict) -> int | None:
    """The searches the reply's usage bills, as the inference records them."""
    return web_searches_billed(message_of(body).usage)


def faked(reply, max_tokens: int = 1500) -> dict:
    """The body the fake Messages API sends for `reply` (the same builder the integration tests use)."""
    return FakeAnthropic()._message(
        {"model": "claude-haiku-5-5", "messages": [], "max_tokens": max_tokens}, reply
    )


# --- the reply --------------------------------------------------------------------------------------


def test_the_reference_reply_reads_into_its_search_results_briefing_and_sources():
    findings = read(REFERENCE_REPLY)

    assert [(s.query, s.error) for s in findings.searches] == [("Acme latest news", None)]
    assert findings.searches[0].results == (
        FoundPage("https://news.example.com/acme-ceo", "Acme names new CEO", "May 3, 2025"),
        FoundPage("https://biz.example.org/acme-q1", "Acme Q1 results", None),
    )
    # every text block, with no separator, trimmed: the pre-search chatter included, as the server does
    assert findings.text == (
        "I'll search for the latest news.Carol Smith became the CEO of Acme in May 2025. "
        "Acme reported record revenue in Q1 2025."
    )
    assert billed(REFERENCE_REPLY) == 1 and findings.found
    # cited pages only, with the page age of the result that found them
    assert findings.sources == (
        FoundPage("https://news.example.com/acme-ceo", "Acme names new CEO", "May 3, 2025"),
    )


def test_several_searches_keep_their_order_and_their_own_results():
    reply = web_search_reply(
        [
            FakeSearch("acme ceo", [search_result("https://a.example/1", "A one", "2 days ago")]),
            FakeSearch("acme results", [search_result("https://b.example/2", "B two")]),
            FakeSearch("acme lawsuit", []),
        ],
        ["Acme named Carol Smith its CEO in May 2025."],
    )
    findings = read(faked(reply))

    assert [s.query for s in findings.searches] == ["acme ceo", "acme results", "acme lawsuit"]
    assert [[page.url for page in s.results] for s in findings.searches] == [
        ["https://a.example/1"],
        ["https://b.example/2"],
        [],
    ]
    assert billed(faked(reply)) == 3


def test_without_citations_the_sources_are_every_page_found_each_once_in_result_order():
    reply = web_search_reply(
        [
            FakeSearch(
                "q1",
                [
                    search_result("https://a.example/1", "A one", "2 days ago"),
                    search_result("https://b.example/2", "B two"),
                ],
            ),
            FakeSearch("q2", [search_result("https://a.example/1", "A one again")]),
        ],
        ["Carol works at Acme."],
    )
    findings = read(faked(reply))

    assert findings.citations == ()
    assert [page.as_source() for page in findings.sources] == [
        {"url": "https://a.example/1", "title": "A one", "page_age": "2 days ago"},
        {"url": "https://b.example/2", "title": "B two"},
    ]


def test_cited_sources_come_in_citation_order_each_once():
    results = [
        search_result("https://a.example/1", "A one", "2 days ago"),
        search_result("https://b.example/2", "B two"),
    ]
    reply = web_search_reply(
        [FakeSearch("q", results)],
        [
            (
                "Carol works at Acme.",
                [citation("https://b.example/2", "B two"), citation("https://a.example/1", "A one")],
            ),
            (" Dave knows Carol.", [citation("https://b.example/2", "B two")]),
        ],
    )
    findings = read(faked(reply))

    assert [c.url for c in findings.citations] == [
        "https://b.example/2",
        "https://a.example/1",
        "https://b.example/2",
    ]
    assert [(p.url, p.page_age) for p in findings.sources] == [
        ("https://b.example/2", None),
        ("https://a.example/1", "2 days ago"),
    ]


def test_an_error_result_is_reported_on_its_search_and_the_rest_stands():
    reply = web_search_reply(
        [
            FakeSearch("q1", [search_result("https://a.example/1", "A one")]),
            FakeSearch("q2", error_code="unavailable"),
        ],
        ["Carol works at Acme."],
    )
    findings = read(faked(reply))

    assert [(s.query, s.error, len(s.results)) for s in findings.searches] == [
        ("q1", None, 1),
        ("q2", "unavailable", 0),
    ]
    assert billed(faked(reply)) == 1  # a search the tool could not run is not billed
    assert findings.found and findings.text == "Carol works at Acme."


def test_searches_past_max_uses_get_the_apis_max_uses_exceeded_error():
    reply = web_search_reply(
        [FakeSearch("q1"), FakeSearch("q2"), FakeSearch("q3")], ["NO_RESULTS"], max_uses=2
    )
    findings = read(faked(reply))

    assert [s.error for s in findings.searches] == [None, None, "max_uses_exceeded"]
    assert billed(faked(reply)) == 2


@pytest.mark.parametrize("texts", [[], [""], ["   "], ["NO_RESULTS"], ["  NO_RESULTS\n"]])
def test_a_reply_without_text_or_with_no_results_found_nothing(texts):
    findings = read(
        faked(web_search_reply([FakeSearch("q", [search_result("https://a.example/1", "A")])], texts))
    )

    assert not findings.found
    assert findings_text(findings) is None
    assert [p.url for p in findings.sources] == ["https://a.example/1"]  # still listed


def test_a_malformed_result_or_an_unknown_block_does_not_lose_the_rest():
    body = json.loads(json.dumps(REFERENCE_REPLY))
    body["content"][2]["content"].insert(0, {"type": "web_search_result", "title": "no url"})
    body["content"].insert(0, {"type": "thinking", "thinking": "...", "signature": "s"})
    body["content"].append({"type": "web_fetch_tool_result", "tool_use_id": "x", "content": {"anything": 1}})
    body["content"].append({"type": "web_search_tool_result", "tool_use_id": "orphan", "content": "?"})
    findings = read(body)

    assert [page.url for page in findings.searches[0].results] == [
        "https://news.example.com/acme-ceo",
        "https://biz.example.org/acme-q1",
    ]


def test_an_error_object_without_a_code_is_still_an_error():
    body = json.loads(json.dumps(REFERENCE_REPLY))
    body["content"][2]["content"] = {"type": "web_search_tool_result_error"}
    assert read(body).searches[0].error == "unknown_error"


def test_a_search_whose_result_never_came_is_listed_without_pages():
    body = json.loads(json.dumps(REFERENCE_REPLY))
    del body["content"][2]
    findings = read(body)
    assert [(s.query, s.results, s.error) for s in findings.searches] == [("Acme latest news", (), None)]
    assert findings.found


def test_a_paused_turn_is_no_finding():
    body = json.loads(json.dumps(REFERENCE_REPLY))
    body["stop_reason"] = "pause_turn"  # the model stopped between searches: its text is not an answer
    with pytest.raises(ProviderError, match="truncated \\(pause_turn\\)"):
        read(body)


@pytest.mark.parametrize(
    ("stop_reason", "problem"),
    [("refusal", "LLM refused to answer stage web_search"), ("max_tokens", r"was truncated \(max_tokens\)")],
)
def test_a_refused_or_truncated_answer_is_a_provider_error(stop_reason, problem):
    body = {**REFERENCE_REPLY, "stop_reason": stop_reason}
    with pytest.raises(ProviderError, match=problem):
        read(body)


def test_a_reply_without_usage_of_the_tool_counts_no_search():
    body = {**REFERENCE_REPLY, "usage": {"input_tokens": 10, "output_tokens": 2}}
    assert billed(body) is None  # a call that reports no server tool ran no search


# --- the request, the price, the stage ----------------------------------------------------------


def test_the_request_carries_what_the_gligabao_servers_does():
    subject = SearchSubject("Bob", "person")
    request = search_request(
        subject, today=datetime(2026, 12, 7, tzinfo=UTC).date(), max_uses=3, model="claude-haiku-5-5"
    )

    assert request["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]
    assert request["max_tokens"] == 1500
    assert request["messages"] == [
        {
            "role": "user",
            "content": "<today>2026-12-07</today>\n<query>latest world events and news about Bob (person)</query>\n"
            "<entity>\nname: Bob\ntype: person\ndescription: (none)\n</entity>",
        }
    ]
    assert request["system"].startswith("You find recent news about one entity")
    assert request["system"].endswith("When nothing relevant and recent is found, answer exactly: NO_RESULTS")
    assert request["thinking"] == {"type": "disabled"} and "output_config" not in request


def test_the_entitys_description_is_in_the_message():
    message = user_message("Acme", "organization", "a firm", datetime(2026, 1, 2, tzinfo=UTC).date())
    assert "description: a firm\n" in message


def test_a_search_costs_a_cent_beside_the_tokens():
    assert WEB_SEARCH_USD_PER_SEARCH == 0.01
    assert web_search_cost_usd(3) == pytest.approx(0.03)
    assert web_search_cost_usd(None) == 0
    # the reference's figure: 1500 x 0.1 / 1M + 120 x 0.5 / 1M + 0.01
    assert cost_usd("claude-haiku-5-5", 1500, 120) + web_search_cost_usd(1) == pytest.approx(0.01021)


def test_web_search_takes_a_model_but_no_reasoning_level():
    assert parse_models({"web_search": "claude-sonnet-4-5"}, REMEMBER_MODEL_STAGES) == {
        "web_search": "claude-sonnet-4-5"
    }
    with pytest.raises(BadRequest, match='unknown stage "web_search"'):
        parse_reasoning({"web_search": "low"}, REMEMBER_STAGES, "extract")
    with pytest.raises(BadRequest, match='"query" is a stage of query, not of remember'):
        parse_models({"query": "claude-haiku-5-5"}, REMEMBER_MODEL_STAGES)


@pytest.mark.parametrize("llm", [object(), None])
def test_an_llm_without_the_tool_makes_web_search_a_503(llm):
    with pytest.raises(NotConfigured, match="web search is not available"):
        web_search_llm(llm)


def test_claude_on_bedrock_has_no_web_search_tool():
    from gligabao.ai.llm import LLM

    with pytest.raises(NotConfigured):
        web_search_llm(LLM(default_model="claude-haiku-5-5", provider="bedrock"))
    anthropic = LLM(default_model="claude-haiku-5-5", api_key="sk-ant-x")
    assert web_search_llm(anthropic) is anthropic


# --- the texts to remember ----------------------------------------------------------------------


def test_the_key_entities_have_the_most_facts_ties_in_extraction_order_concepts_left_out():
    # The reference's chain: Person0 knows Person1 ... Person12, and Person5 knows Person9 and Person2.
    people = [stored_entity(i, f"Person{i}") for i in range(13)]
    edges = [stored_edge(i, i + 1) for i in range(12)] + [stored_edge(5, 9), stored_edge(5, 2)]
    assert [e.name for e in key_entities(people, edges, 3)] == ["Person5", "Person2", "Person9"]

    zeta, acme, bob, alice = (
        stored_entity(1, "Zeta", "concept"),
        stored_entity(2, "Acme", "organization"),
        stored_entity(3, "Bob"),
        stored_entity(4, "Alice"),
    )
    edges = [stored_edge(4, 2), stored_edge(4, 1), stored_edge(3, 1), stored_edge(3, 4)]
    assert [e.name for e in key_entities([zeta, acme, bob, alice], edges, 3)] == ["Alice", "Bob", "Acme"]


def test_no_entity_no_search_and_an_entity_listed_twice_counts_once():
    assert key_entities([], [], 3) == []
    alice = stored_entity(1, "Alice")
    assert key_entities([alice, alice], [], 3) == [alice]


def test_the_artifacts_text_is_the_briefing_then_its_sources():
    reply = web_search_reply(
        [
            FakeSearch(
                "q",
                [
                    search_result("https://a.example/1", "A one", "2 days ago"),
                    search_result("https://b.example/2", "B two"),
                ],
            )
        ],
        [
            (
                "Carol works at Acme.",
                [citation("https://b.example/2", "B two"), citation("https://a.example/1", "A one")],
            ),
            " Dave knows Carol.",
        ],
    )
    assert findings_text(read(faked(reply))) == (
        "Carol works at Acme. Dave knows Carol.\n\nSources:\n- B two <https://b.example/2>\n- A one <https://a.example/1> (2 days ago)"
    )


def test_findings_without_a_source_are_the_briefing_alone():
    assert findings_text(read(faked(web_search_reply([], ["No results."])))) == "No results."


@dataclass
class StandInMemory:
    """What web_search_texts reads of the memory: its limits, its LLM and its clock."""

    limits: Limits = field(default_factory=Limits)
    llm: object = None

    def clock(self) -> datetime:
        return datetime(2026, 12, 7, tzinfo=UTC)


def searcher(replies: dict[str, object]):
    """A stand-in web search call: the findings (or the error) scripted for each entity's name."""
    asked = []

    def search(call, subject):
        asked.append(subject)
        outcome = replies[subject.name]
        if isinstance(outcome, Exception):
            raise outcome
        return read(faked(outcome), cost=0.0101)

    search.asked = asked
    return search


def test_each_key_entity_is_one_search_its_texts_in_rank_order_a_failed_one_with_its_error():
    alice, acme, bob, carol = (
        stored_entity(1, "Alice"),
        stored_entity(2, "Acme", "organization", "a firm"),
        stored_entity(3, "Bob"),
        stored_entity(4, "Carol"),
    )
    edges = [
        stored_edge(1, 2),
        stored_edge(3, 1),
        stored_edge(2, 4),
        stored_edge(1, 4),
    ]  # Alice 3, Acme 2, Carol 2, Bob 1
    found = web_search_reply(
        [FakeSearch("acme news", [search_result("https://a.example/1", "A one")])],
        ["Acme hired Carol in 2025."],
    )
    search = searcher(
        {
            "Alice": web_search_reply([FakeSearch("alice")], ["NO_RESULTS"]),
            "Acme": found,
            "Carol": ProviderError("LLM call of stage web_search failed: 500 api_error"),
        }
    )
    call = CallContext(user_id="u1", type="remember")
    texts = web_search_texts(StandInMemory(), call, [alice, acme, bob, carol], edges, search=search)

    assert [t.entity.name for t in texts] == ["Alice", "Acme", "Carol"]
    assert sorted(s.name for s in search.asked) == ["Acme", "Alice", "Carol"]
    nothing, acme_text, failed = texts
    assert (nothing.text, nothing.briefing, nothing.searches, nothing.error) == (None, None, ("alice",), None)
    assert acme_text.query == "latest world events and news about Acme (organization)"
    assert acme_text.text == "Acme hired Carol in 2025.\n\nSources:\n- A one <https://a.example/1>"
    assert acme_text.briefing == "Acme hired Carol in 2025."
    assert acme_text.sources == ({"url": "https://a.example/1", "title": "A one"},)
    assert acme_text.searches == ("acme news",) and acme_text.cost_usd == 0.0101
    assert (failed.text, failed.error) == (None, "LLM call of stage web_search failed: 500 api_error")


def test_the_number_of_entities_searched_is_a_limit():
    people = [stored_entity(i, f"P{i}") for i in range(1, 6)]
    search = searcher({f"P{i}": web_search_reply([], ["NO_RESULTS"]) for i in range(1, 6)})
    memory = StandInMemory(limits=Limits(web_search_entities=2))
    texts = web_search_texts(memory, CallContext(user_id="u1", type="remember"), people, [], search=search)
    assert [t.entity.name for t in texts] == ["P1", "P2"]


def test_no_key_entity_means_no_call_at_all():
    memory = StandInMemory()  # no LLM with the tool: a call would be a 503
    assert (
        web_search_texts(
            memory, CallContext(user_id="u1", type="remember"), [stored_entity(1, "Idea", "concept")], []
        )
        == []
    )
    with pytest.raises(NotConfigured):
        require_web_search(memory)
    with pytest.raises(NotConfigured):
        web_search_texts(memory, CallContext(user_id="u1", type="remember"), [stored_entity(1, "Alice")], [])
