"""A user (or a dataset) with no memory yet, against the local API: the HTTP API keeps its 404, the
client's reads (context, search, query) answer an empty result flagged `dataset_exists=False`, and
the MCP read tools (query, search, session) say memory is empty. Any other 404 is still an error."""

from __future__ import annotations

import httpx2
import pytest
from test_mcp_server import run, text_of

from gligabao.client import Memory, NotFoundError
from gligabao.client.memory import NO_CONTEXT_ANSWER, ContextResult, QueryResult, SearchResult
from gligabao.memory import query as server_query


@pytest.fixture
def new_user(api):
    with Memory(api.base_url, user_id="new-user") as client:
        yield client


def test_the_http_api_answers_404_for_a_dataset_nothing_was_remembered_in(api, db, models):
    for path in ("/v1/gb/query", "/v1/gb/search"):
        reply = api.post(path, {"user_id": "new-user", "query": "Where does Alice work?"})

        assert (reply.status, reply.json) == (404, {"error": "dataset 'main' not found"}), path


def test_a_new_users_context_is_empty_and_says_the_dataset_does_not_exist(new_user, db, models):
    context = new_user.context("Where does Alice work?", session_id="chat-1")

    assert isinstance(context, ContextResult)
    assert context.dataset_exists is False
    assert (context.context, context.entities, context.edges, context.passages) == ("", [], [], [])
    assert context.session_id == "chat-1"


def test_a_new_users_search_is_empty_and_says_the_dataset_does_not_exist(new_user, db, models):
    found = new_user.search("Alice", dataset="work", limit=3)

    assert isinstance(found, SearchResult)
    assert (found.dataset, found.dataset_exists) == ("work", False)
    assert (found.entities, found.edges, found.passages) == ([], [], [])


def test_a_new_users_question_gets_the_apis_no_context_answer_without_a_model_call(new_user, db, models):
    fake_anthropic, _ = models

    answer = new_user.query("Where does Alice work?", session_id="chat-1")

    assert isinstance(answer, QueryResult)
    assert answer.dataset_exists is False
    assert answer.answer == NO_CONTEXT_ANSWER == server_query.NO_CONTEXT_ANSWER
    assert (answer.evidence.entities, answer.evidence.edges, answer.evidence.passages) == ([], [], [])
    assert fake_anthropic.messages == []


def test_once_something_is_remembered_the_dataset_exists(new_user, db, models):
    new_user.remember("Alice works at Acme.")

    context = new_user.context("Where does Alice work?")
    found = new_user.search("Alice")

    assert context.dataset_exists and found.dataset_exists
    assert "Alice works at Acme." in context.context
    assert [e.relation for e in found.edges] == ["works_at"]


@pytest.mark.parametrize(
    "error",
    [
        "dataset 'other' not found",  # another dataset's 404 than the one asked
        "Not Found",  # API Gateway's, for a route the stage does not have
    ],
)
def test_any_other_404_is_still_a_not_found_error(error):
    def not_found(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(404, json={"error": error})

    memory = Memory("http://api.test", user_id="u1", transport=httpx2.MockTransport(not_found), retries=0)

    for read in (memory.context, memory.search, memory.query):
        with pytest.raises(NotFoundError) as raised:
            read("Where does Alice work?")
        assert raised.value.error == error, read.__name__


def test_the_mcp_read_tools_tell_a_new_user_that_memory_is_empty(api, db, models):
    calls = {
        "query": {"question": "Where does Alice work?"},
        "search": {"query": "Alice", "limit": 3},
        "session": {"session_id": "chat-1"},
        "forget": {"kind": "edge", "id": 1},
    }

    async def session(client):
        return {tool: await client.call_tool(tool, arguments) for tool, arguments in calls.items()}

    results = run(session)(api.base_url, env={"GB_USER_ID": "new-user"})

    for tool in ("query", "search", "session"):
        assert not results[tool].is_error, tool
        assert text_of(results[tool]).startswith("Memory is empty: dataset main does not exist yet"), tool
    assert results["forget"].is_error and "(404)" in text_of(results["forget"])  # an id: still an error
