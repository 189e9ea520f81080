"""A fake Anthropic Messages API (POST /v1/messages) for the real `anthropic` SDK.

Replies come, in order of precedence, from the queue (`queue(...)`), from the
installed `responder(body)`, else a default `{}`. A reply is a `Reply`, a dict
(sent as the JSON text of the answer) or a str (sent as the raw text):

    fake_anthropic.queue({"entities": []})                       # JSON text
    fake_anthropic.queue("Sure! ```json\\n{...}\\n```")          # raw text
    fake_anthropic.queue(Reply(text='{"a": ', stop_reason="max_tokens"))
    fake_anthropic.queue(Reply.error(500), times=3)              # every attempt fails
    fake_anthropic.echo_key_in_errors = True                     # errors quote the key received
    fake_anthropic.responder = lambda body: {"answer": prompt_of(body)}

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
from collections.abc import Callable
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
    status: int = 200  # >= 400: an error reply
    error_type: str | None = None
    delay_s: float = 0.0

    @classmethod
    def error(cls, status: int, error_type: str | None = None) -> Reply:
        return cls(status=status, error_type=error_type)

    @property
    def answer_text(self) -> str:
        return self.text if self.text is not None else json.dumps(self.data if self.data is not None else {})


Responder = Callable[[dict], "Reply | dict | str"]


class FakeAnthropic(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.replies: deque[Reply] = deque()
        self.responder: Responder | None = None
        # As a careless provider or proxy might: every error quotes the key the request carried, in
        # its message ("Incorrect API key provided: ..."), its error type and its request id.
        self.echo_key_in_errors = False
        self._ids = itertools.count(1)

    def reset(self) -> None:
        super().reset()
        with self.lock:
            self.replies.clear()
            self.responder = None
            self.echo_key_in_errors = False

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
        return as_reply(responder(body)) if responder else Reply()

    def _message(self, body: dict, reply: Reply) -> dict:
        text = reply.answer_text
        content: list[dict] = [{"type": "text", "text": text}]
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
