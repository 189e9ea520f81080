"""Stage `web_search`: one model call that searches the web for the latest events about one entity,
with Anthropic's server-side web search tool (`web_search_20250305`).

The API runs the searches within the call: the reply holds, for each search, a `server_tool_use`
block (its query) and a `web_search_tool_result` (the pages found, or an error object such as
`max_uses_exceeded`), then the model's text blocks, whose `citations` name the pages they rest on.
`usage.server_tool_use.web_search_requests` counts the searches billed. The call goes through the
LLM's shared path (`LLM.exchange`: retries, deadline, one `Inference` with its tokens, its searches
and their fee), so a transport failure or a refusal is a ProviderError (502) as for every stage; a
search that failed is reported on its `Search`, the rest of the reply stands.

Only Claude through the Anthropic API has the tool: any other LLM makes web search a 503.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import BaseModel, ValidationError

from gligabao.ai.llm import (
    LLM,
    ContentBlock,
    MessagesReply,
    base_request,
    check_finished,
    reply_text,
    usage_cost_usd,
)
from gligabao.ai.prompts.web_search import (
    NO_RESULTS,
    SYSTEM,
    WEB_SEARCH_MAX_TOKENS,
    search_query,
    user_message,
)
from gligabao.ai.stages import WEB_SEARCH_STAGE
from gligabao.errors import NotConfigured, ProviderError
from gligabao.observability.inferences import CallContext

STAGE = WEB_SEARCH_STAGE
TOOL_TYPE = "web_search_20250305"
TOOL_NAME = "web_search"
UNAVAILABLE = "web search is not available: it needs an Anthropic API key (ANTHROPIC_API_KEY)"


# --- what the call returns ------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchSubject:
    """The entity searched for."""

    name: str
    type: str
    description: str = ""

    @property
    def query(self) -> str:
        return search_query(self.name, self.type)


@dataclass(frozen=True)
class FoundPage:
    """A page a search found (or a text cited): its address, its title and how old the search
    engine says it is ("May 3, 2025", "2 days ago"; None when it did not say)."""

    url: str
    title: str
    page_age: str | None = None

    def as_source(self) -> dict[str, str]:
        """As the artifact's `sources` and the response list it: page_age only when known."""
        source = {"url": self.url, "title": self.title}
        if self.page_age:
            source["page_age"] = self.page_age
        return source


@dataclass(frozen=True)
class Search:
    """One search the model ran: its query, and the pages found or the tool's error code."""

    query: str
    results: tuple[FoundPage, ...] = ()
    error: str | None = None  # max_uses_exceeded, unavailable, too_many_requests, ...


@dataclass(frozen=True)
class Citation:
    """A passage of the model's text resting on a page."""

    url: str
    title: str


@dataclass(frozen=True)
class WebFindings:
    """What one web search call found about its subject."""

    searches: tuple[Search, ...]
    text: str  # the model's briefing: all its text blocks, trimmed
    citations: tuple[Citation, ...]
    cost_usd: float | None  # the call's: tokens and searches (None: a model no table prices)

    @property
    def found(self) -> bool:
        """Whether the model found anything: a briefing that is not NO_RESULTS."""
        return bool(self.text) and self.text != NO_RESULTS

    @property
    def sources(self) -> tuple[FoundPage, ...]:
        """The pages the briefing rests on: those cited, in citation order; else every page found,
        in result order; each once, with its page_age from the search that found it."""
        found = [page for search in self.searches for page in search.results]
        age = {page.url: page.page_age for page in reversed(found)}  # the first result's wins
        title = {page.url: page.title for page in reversed(found)}
        if self.citations:
            cited = (
                FoundPage(c.url, c.title or title.get(c.url, ""), age.get(c.url)) for c in self.citations
            )
            return _each_url_once(cited)
        return _each_url_once(found)


def _each_url_once(pages: Any) -> tuple[FoundPage, ...]:
    seen: set[str] = set()
    kept = []
    for page in pages:
        if page.url not in seen:
            seen.add(page.url)
            kept.append(page)
    return tuple(kept)


# --- the call -------------------------------------------------------------------------------------


def web_search_llm(llm: object) -> LLM:
    """The LLM that can search the web: Claude through the Anthropic API; any other is a 503
    (Bedrock, OpenAI-compatible servers and the offline LLM have no web search tool)."""
    if isinstance(llm, LLM) and llm.provider == "anthropic":
        return llm
    raise NotConfigured(UNAVAILABLE)


def search_the_web(
    llm: LLM,
    call: CallContext,
    subject: SearchSubject,
    *,
    today: date,
    max_uses: int,
    model: str | None = None,
    deadline: float | None = None,
) -> WebFindings:
    """The latest events about `subject`, searched at most `max_uses` times. Recorded on `call` as
    an inference of stage web_search (its searches and their fee in its cost). Raises
    ProviderError (502) when the call fails or the model refuses."""
    model = model or llm.default_model
    return llm.exchange(
        call,
        STAGE,
        model=model,
        reasoning="none",
        request=lambda: search_request(subject, today=today, max_uses=max_uses, model=model),
        read=lambda message: findings_of(message, usage_cost_usd(model, message.usage, llm.prices)),
        shape=WebSearchReply,
        deadline=deadline,
    )


def search_request(subject: SearchSubject, *, today: date, max_uses: int, model: str) -> dict[str, Any]:
    """The gligabao server's request: its prompt, 1,500 tokens, the tool with max_uses; no domain
    filter, no location, and (here as for every stage at level none) thinking off."""
    content = user_message(subject.name, subject.type, subject.description, today)
    request = base_request(STAGE, SYSTEM, content, "none", model, WEB_SEARCH_MAX_TOKENS)
    request["tools"] = [web_search_tool(max_uses)]
    return request


def web_search_tool(max_uses: int) -> dict[str, Any]:
    """The tools entry (the SDK's WebSearchTool20250305Param)."""
    return {"type": TOOL_TYPE, "name": TOOL_NAME, "max_uses": max_uses}


# --- the reply ------------------------------------------------------------------------------------


class CitationIn(BaseModel):
    type: str
    url: str | None = None
    title: str | None = None


class PageIn(BaseModel):
    type: str
    url: str
    title: str | None = None
    page_age: str | None = None


class ToolErrorIn(BaseModel):
    type: str
    error_code: str | None = None


class SearchBlock(ContentBlock):
    """A block of a web search reply: text (with its citations), server_tool_use (id, name, input)
    or web_search_tool_result (tool_use_id, content); other kinds are skipped. `content` is read
    only for a search's result, whose shape is checked when read."""

    citations: list[CitationIn] | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    content: Any = None


class WebSearchReply(MessagesReply):
    content: list[SearchBlock]


def findings_of(message: WebSearchReply, cost_usd: float | None = None) -> WebFindings:
    """The findings a reply holds. A refused, truncated or paused answer is a ProviderError (its
    searches were billed all the same: the inference records them); a search's error is kept on it.
    A paused turn (pause_turn) is the model stopped between searches: what it said so far is no
    finding."""
    if message.stop_reason == "pause_turn":
        raise ProviderError(f"LLM reply of stage {STAGE} was truncated (pause_turn)")
    check_finished(message, STAGE)
    return WebFindings(
        searches=_searches(message.content),
        text=reply_text(message).strip(),
        citations=_citations(message.content),
        cost_usd=cost_usd,
    )


def _searches(blocks: list[SearchBlock]) -> tuple[Search, ...]:
    """Each web_search server_tool_use in order, with the result that answers its id."""
    results = {block.tool_use_id: block.content for block in blocks if block.type == "web_search_tool_result"}
    return tuple(
        _search(str((block.input or {}).get("query") or ""), results.get(block.id))
        for block in blocks
        if block.type == "server_tool_use" and block.name == TOOL_NAME
    )


def _search(query: str, content: Any) -> Search:
    """A search and its result: a list of pages, or the tool's error object (or nothing, when the
    reply stopped before the result: the search is listed without pages)."""
    if isinstance(content, dict):
        error = _parsed(ToolErrorIn, content)
        return Search(query, error=(error.error_code if error else None) or "unknown_error")
    pages = [_parsed(PageIn, item) for item in content] if isinstance(content, list) else []
    return Search(
        query,
        tuple(
            FoundPage(page.url, page.title or "", page.page_age or None)
            for page in pages
            if page is not None and page.type == "web_search_result"
        ),
    )


def _citations(blocks: list[SearchBlock]) -> tuple[Citation, ...]:
    return tuple(
        Citation(cited.url, cited.title or "")
        for block in blocks
        if block.type == "text"
        for cited in block.citations or []
        if cited.type == "web_search_result_location" and cited.url
    )


def _parsed(shape: type[BaseModel], value: Any) -> Any:
    """`value` as `shape`, or None: one malformed page does not lose the others."""
    try:
        return shape.model_validate(value)
    except ValidationError:
        return None
