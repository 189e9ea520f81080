"""A fake Anthropic Messages API (POST /v1/messages) for the real `anthropic` SDK.

Replies come, in order of precedence, from the queue (`queue(...)`), from the
installed `responder(body)`, else a default `{}`. A reply is a `Reply`, a dict
(sent as the JSON text of the answer) or a str (sent as the raw text):

    fake_anthropic.queue({"entities": []})                       # JSON text
    fake_anthropic.queue("Sure! ```json\\n{...}\\n```")          # raw text
    fake_anthropic.queue(Reply(text='{"a": ', stop_reason="max_tokens"))
    fake_anthropic.queue(Reply.error(500), times=3)              # every attempt fails
    fake_anthropic.echo_key_in_errors = True                     # errors quote the key received
    fake_anthropic.responder = lambda body: {"answer": prompt_of(body)}   # None: the default reply

A request carrying the web search tool (`web_search_20250305`) is answered in the tool's wire
format: each search a `server_tool_use` block and its `web_search_tool_result`, then the model's
text blocks with their citations, `usage.server_tool_use.web_search_requests` counting the searches
run. Script them by what the prompt names (ahead of the responder; the request's `max_uses` is
applied as the API applies it), or queue a `web_search_reply(...)`; unscripted, the model runs one
search that finds nothing and answers NO_RESULTS:

    fake_anthropic.script_web_search(
        "Acme",
        FakeSearch("Acme news", [search_result("https://news.example/acme", "Acme names a CEO")]),
        FakeSearch("Acme results", error_code="unavailable"),
        texts=[("Carol Smith became the CEO of Acme in May 2025.", [citation("https://news.example/acme", "Acme names a CEO")])],
    )

Faults of the transport (a reset, a hang, a cut body, a trickle) and raw bodies are injected ahead
of these replies with `fake_anthropic.inject(Fault...)` (fakes/fake_http.py).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fakes.fake_http import FakeServer, RecordedRequest, Response

DEFAULT_THINKING = "Let me think about what the text says."
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
MIN_THINKING_BUDGET = 1024
IMAGE_TOKENS = 1000
IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
IMAGE_MAX_BYTES = 5 * 1024 * 1024  # the Messages API's limit per image (base64-decoded)


@dataclass
class Reply:
    data: Any = None  # sent as JSON text
    text: str | None = None  # sent as is (wins over data)
    stop_reason: str = "end_turn"
    stop_details: dict | None = None
    thinking: str | None = None  # the thinking block's text, when the request asked for thinking
    usage: dict = field(default_factory=dict)  # overrides of the computed usage
    content: list[dict] | None = None  # the reply's blocks as they are (wins over text and data)
    status: int = 200  # >= 400: an error reply
    error_type: str | None = None
    delay_s: float = 0.0

    @classmethod
    def error(cls, status: int, error_type: str | None = None) -> Reply:
        return cls(status=status, error_type=error_type)

    @property
    def answer_text(self) -> str:
        return self.text if self.text is not None else json.dumps(self.data if self.data is not None else {})


Responder = Callable[[dict], "Reply | dict | str | None"]


# --- the web search tool (web_search_20250305): its request entry and its reply's blocks ---------

WEB_SEARCH_TOOL = "web_search_20250305"
NO_RESULTS = "NO_RESULTS"
# What the API answers for a search it could not run (WebSearchToolResultErrorCode).
WEB_SEARCH_ERROR_CODES = (
    "invalid_tool_input",
    "unavailable",
    "max_uses_exceeded",
    "too_many_requests",
    "query_too_long",
    "request_too_large",
)


@dataclass
class FakeSearch:
    """One search the fake model runs: its query, and the pages it finds or the tool's error."""

    query: str
    results: list[dict] = field(default_factory=list)  # search_result(...) dicts
    error_code: str | None = None  # one of WEB_SEARCH_ERROR_CODES: the result is the error object


# A text block of the model's answer: its text, or its text and the citations it carries.
Answer = str | tuple[str, Sequence[dict]]


@dataclass
class WebSearchScript:
    about: str  # the reply is for requests whose prompt names this
    searches: tuple[FakeSearch, ...]
    texts: tuple[Answer, ...]
    options: dict


def search_result(url: str, title: str, page_age: str | None = None) -> dict:
    """A page a search found, as the API returns it."""
    return {
        "type": "web_search_result",
        "url": url,
        "title": title,
        "page_age": page_age,
        "encrypted_content": "fake-encrypted-content",
    }


def citation(url: str, title: str, cited_text: str = "...") -> dict:
    """A text block's citation of a page a search found."""
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": title,
        "encrypted_index": "fake-encrypted-index",
        "cited_text": cited_text,
    }


def web_search_reply(
    searches: Sequence[FakeSearch],
    texts: Sequence[Answer] = (NO_RESULTS,),
    *,
    max_uses: int | None = None,
    **options: Any,
) -> Reply:
    """A reply of the web search tool's wire format: each search a server_tool_use block then its
    web_search_tool_result (the pages found, or the error object), then the answer's text blocks
    with their citations. The searches past `max_uses` get the API's max_uses_exceeded error;
    usage.server_tool_use.web_search_requests counts the searches run (the API bills no failed
    search). `options`: Reply's other fields (stop_reason, usage, ...)."""
    content: list[dict] = []
    run = 0
    for number, search in enumerate(searches, start=1):
        tool_use_id = f"srvtoolu_fake_{number:02d}"
        content.append(
            {
                "type": "server_tool_use",
                "id": tool_use_id,
                "name": "web_search",
                "input": {"query": search.query},
            }
        )
        error_code = search.error_code
        if error_code is None and max_uses is not None and run >= max_uses:
            error_code = "max_uses_exceeded"
        if error_code is None:
            run += 1
        result: list[dict] | dict = (
            {"type": "web_search_tool_result_error", "error_code": error_code}
            if error_code is not None
            else list(search.results)
        )
        content.append({"type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": result})
    content.extend(_text_block(answer) for answer in texts)
    usage = {"server_tool_use": {"web_search_requests": run}, **options.pop("usage", {})}
    return Reply(content=content, usage=usage, **options)


def _text_block(answer: Answer) -> dict:
    if isinstance(answer, str):
        return {"type": "text", "text": answer}
    text, citations = answer
    block: dict = {"type": "text", "text": text}
    if citations:
        block["citations"] = list(citations)
    return block


def web_search_tool(body: dict) -> dict | None:
    """The request's web search tool entry, if it has one."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return next(
        (tool for tool in tools or [] if isinstance(tool, dict) and tool.get("type") == WEB_SEARCH_TOOL),
        None,
    )


def asked_query(body: dict) -> str:
    """What the prompt asks to search for: its <query>, else its first line."""
    prompt = prompt_text(body)
    found = re.search(r"<query>(.*?)</query>", prompt, re.S)
    return found.group(1).strip() if found else (prompt.strip().splitlines() or [""])[0][:100]


class FakeAnthropic(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.replies: deque[Reply] = deque()
        self.responder: Responder | None = None
        # As a careless provider or proxy might: every error quotes the key the request carried, in
        # its message ("Incorrect API key provided: ..."), its error type and its request id.
        self.echo_key_in_errors = False
        self.web_search_scripts: list[WebSearchScript] = []
        self._ids = itertools.count(1)

    def reset(self) -> None:
        super().reset()
        with self.lock:
            self.replies.clear()
            self.responder = None
            self.echo_key_in_errors = False
            self.web_search_scripts.clear()

    def script_web_search(
        self, about: str, *searches: FakeSearch, texts: Sequence[Answer] = (NO_RESULTS,), **options: Any
    ) -> None:
        """The reply to the web search requests whose prompt names `about` (the first script that
        matches): these searches, then these text blocks (web_search_reply), with the request's
        max_uses applied. `options`: Reply's other fields."""
        with self.lock:
            self.web_search_scripts.append(WebSearchScript(about, tuple(searches), tuple(texts), options))

    @property
    def web_search_requests(self) -> list[dict]:
        """The bodies of the Messages requests that carried the web search tool, in order."""
        return [body for body in self.messages if web_search_tool(body) is not None]

    def queue(self, *replies: Reply | dict | str, times: int = 1) -> None:
        with self.lock:
            for _ in range(times):
                self.replies.extend(as_reply(reply) for reply in replies)

    @property
    def messages(self) -> list[dict]:
        """The bodies of the Messages requests received, in order."""
        return [r.body for r in self.requests if r.path.startswith("/v1/messages")]

    @property
    def images(self) -> list[dict]:
        """The image blocks of the Messages requests received, in order."""
        return [block for body in self.messages for block in image_blocks(body)]

    def error_reply(self, status: int, message: str) -> Response:
        return error_response(status, message)

    def handle(self, request: RecordedRequest) -> Response:
        if request.method != "POST" or request.path.split("?")[0] != "/v1/messages":
            return error_response(404, f"no route {request.method} {request.path}")
        if not api_key_of(request.headers):
            return error_response(401, "an API key is required (x-api-key or Authorization: Bearer)")
        if not request.headers.get("anthropic-version"):
            return error_response(400, "anthropic-version header is required")
        problem = request_problem(request.body)
        if problem:
            return error_response(400, problem)
        reply = self._next_reply(request.body)
        if reply.status >= 400 and self.echo_key_in_errors:
            return key_error_response(reply.status, api_key_of(request.headers) or "")
        if reply.status >= 400:
            return error_response(reply.status, f"fake error {reply.status}", reply.error_type, reply.delay_s)
        return Response(200, self._message(request.body, reply), delay_s=reply.delay_s)

    def _next_reply(self, body: dict) -> Reply:
        with self.lock:
            if self.replies:
                return self.replies.popleft()
            responder = self.responder
        tool = web_search_tool(body)
        scripted = self._scripted_web_search(body, tool) if tool is not None else None
        if scripted is not None:
            return scripted
        answer = responder(body) if responder else None
        if answer is not None:
            return as_reply(answer)
        if tool is not None:  # the model searched once and found nothing
            return web_search_reply([FakeSearch(asked_query(body))], max_uses=tool.get("max_uses"))
        return Reply()

    def _scripted_web_search(self, body: dict, tool: dict) -> Reply | None:
        prompt = prompt_text(body)
        with self.lock:
            script = next((s for s in self.web_search_scripts if s.about in prompt), None)
        if script is None:
            return None
        return web_search_reply(
            script.searches, script.texts, max_uses=tool.get("max_uses"), **dict(script.options)
        )

    def _message(self, body: dict, reply: Reply) -> dict:
        if reply.content is not None:
            content = [dict(block) for block in reply.content]
            text = "".join(block.get("text") or "" for block in content if block.get("type") == "text")
        else:
            text = reply.answer_text
            content = [{"type": "text", "text": text}]
        usage = {
            "input_tokens": input_tokens(body),
            "output_tokens": word_count(text),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        }
        if thinking_requested(body):
            thinking = reply.thinking if reply.thinking is not None else DEFAULT_THINKING
            content.insert(0, {"type": "thinking", "thinking": thinking, "signature": "fake-signature"})
            usage["output_tokens"] += word_count(thinking)
            usage["output_tokens_details"] = {"thinking_tokens": word_count(thinking)}
        usage.update(reply.usage)
        return {
            "id": f"msg_fake_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "stop_details": reply.stop_details,
            "usage": usage,
        }


def as_reply(reply: Reply | dict | str) -> Reply:
    if isinstance(reply, Reply):
        return reply
    if isinstance(reply, str):
        return Reply(text=reply)
    return Reply(data=reply)


def api_key_of(headers: dict[str, str]) -> str | None:
    """The key the client sent: SDK 2.x sends it as a Bearer token, older clients as x-api-key."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return headers.get("x-api-key") or (token.strip() if scheme == "Bearer" else None) or None


def request_problem(body: Any) -> str | None:
    """What the real API would reject in the body (the part of it these tests exercise)."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: field required"
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return "messages: at least one message is required"
    return (
        thinking_problem(body)
        or tools_problem(body.get("tools"))
        or output_config_problem(body.get("output_config"))
        or next(filter(None, map(image_problem, image_blocks(body))), None)
    )


def image_blocks(body: dict) -> list[dict]:
    return [
        block
        for message in body.get("messages") or []
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "image"
    ]


def image_problem(block: dict) -> str | None:
    """What the real API refuses in a base64 image block."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return "image.source.type: must be base64 (the only kind these tests send)"
    if source.get("media_type") not in IMAGE_MEDIA_TYPES:
        return f"image.source.media_type: must be one of {', '.join(IMAGE_MEDIA_TYPES)}"
    try:
        data = base64.b64decode(source.get("data") or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        return "image.source.data: invalid base64"
    if not data:
        return "image.source.data: empty image"
    if len(data) > IMAGE_MAX_BYTES:
        return "image exceeds 5 MB maximum"
    return None


def thinking_problem(body: dict) -> str | None:
    thinking = body.get("thinking")
    if thinking is None:
        return None
    if thinking.get("type") not in ("enabled", "disabled", "adaptive"):
        return "thinking.type: must be enabled, disabled or adaptive"
    if thinking["type"] != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
        return f"thinking.budget_tokens: must be at least {MIN_THINKING_BUDGET}"
    if budget >= body["max_tokens"]:
        return "max_tokens must be greater than thinking.budget_tokens"
    return None


def tools_problem(tools: Any) -> str | None:
    """What the real API refuses in a web search tool entry (the only tool these tests send)."""
    if tools is None:
        return None
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        return "tools: must be a list of tool objects"
    for tool in tools:
        if tool.get("type") != WEB_SEARCH_TOOL:
            continue
        if tool.get("name") != "web_search":
            return "tools.web_search_20250305.name: must be web_search"
        max_uses = tool.get("max_uses")
        if max_uses is not None and (
            not isinstance(max_uses, int) or isinstance(max_uses, bool) or max_uses < 1
        ):
            return "tools.web_search_20250305.max_uses: must be a positive integer"
        if tool.get("allowed_domains") and tool.get("blocked_domains"):
            return "tools.web_search_20250305: allowed_domains and blocked_domains cannot be used together"
    return None


def output_config_problem(output_config: Any) -> str | None:
    if output_config is None:
        return None
    output_format = output_config.get("format") if isinstance(output_config, dict) else "?"
    if output_format is None:
        return None
    if not isinstance(output_format, dict) or output_format.get("type") != "json_schema":
        return "output_config.format.type: must be json_schema"
    if not isinstance(output_format.get("schema"), dict):
        return "output_config.format.schema: must be a JSON schema object"
    return None


def thinking_requested(body: dict) -> bool:
    return (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")


def error_response(
    status: int, message: str, error_type: str | None = None, delay_s: float = 0.0
) -> Response:
    error_type = error_type or ERROR_TYPES.get(status, "api_error")
    return Response(
        status,
        {"type": "error", "error": {"type": error_type, "message": message}, "request_id": "req_fake"},
        # Honoured by the retry policy: retries in a millisecond keep the suite fast.
        headers={"retry-after-ms": "1", "request-id": "req_fake"},
        delay_s=delay_s,
    )


def key_error_response(status: int, key: str) -> Response:
    """An error quoting the key the request carried everywhere the SDK reads one from."""
    return Response(
        status,
        {
            "type": "error",
            "error": {"type": f"invalid_key {key}", "message": f"Incorrect API key provided: {key}"},
            "request_id": f"req_{key}",
        },
        headers={"retry-after-ms": "1", "request-id": f"req_{key}"},
    )


def prompt_text(body: dict) -> str:
    """The text of the request's messages, for responders that answer from the prompt."""
    return "\n".join(_block_texts(message.get("content")) for message in body.get("messages", []))


def system_text(body: dict) -> str:
    return _block_texts(body.get("system"))


def input_tokens(body: dict) -> int:
    images = len(image_blocks(body))
    return max(1, word_count(system_text(body)) + word_count(prompt_text(body)) + images * IMAGE_TOKENS)


def word_count(text: str) -> int:
    return len(re.findall(r"\S+", text))


def _block_texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""
