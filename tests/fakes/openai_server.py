"""A fake OpenAI API for the real `openai` SDK: Embeddings (POST /v1/embeddings) and Chat
Completions (POST /v1/chat/completions, the protocol of OpenAI-compatible LLM servers).

Vectors are deterministic: a bag of the text's lowercase words, each hashed to a
signed position, L2-normalised. Identical texts have cosine 1; texts sharing most
words have a high cosine; unrelated texts are near 0.

    fake_openai.override("Alice", [1.0, 0.0, ...])   # this text gets exactly this vector
    fake_openai.fail(500, times=3)                   # the next requests fail (every attempt)
    fake_openai.mangle(lambda reply: {...})          # rewrite the next reply (wrong counts, sizes)
    fake_openai.inject(Fault.never_answer())         # transport faults and raw bodies (fake_http.py)

Chat Completions answer, in order of precedence, from the queue, the responder (given the request
in the Messages API's shape, so the Anthropic fake's responders serve here too), else `{}`:

    fake_openai.queue_chat({"entities": []})                    # JSON text
    fake_openai.queue_chat(Chat(text="```json\n{}\n```"))     # raw text
    fake_openai.queue_chat(Chat(text='{"a": ', finish_reason="length"))
    fake_openai.chat_responder = rule_based_model
    fake_openai.structured_output = False   # a server that refuses response_format json_schema (400)
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import sys
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fakes.fake_http import FakeServer, RecordedRequest, Response

DEFAULT_DIMENSIONS = 1536
MAX_INPUTS = 2048
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    429: "requests",
    500: "server_error",
}


@dataclass
class Chat:
    """One Chat Completions reply."""

    data: Any = None  # sent as JSON text
    text: str | None = None  # sent as is (wins over data)
    finish_reason: str = "stop"
    refusal: str | None = None
    usage: dict | None = field(default_factory=dict)  # overrides of the computed usage; None: no usage
    status: int = 200  # >= 400: an error reply

    @property
    def answer_text(self) -> str:
        return self.text if self.text is not None else json.dumps(self.data if self.data is not None else {})


class FakeOpenAI(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.overrides: dict[str, list[float]] = {}
        self.failures: deque[int] = deque()
        self.manglers: deque[Callable[[dict], dict]] = deque()
        self.chat_replies: deque[Chat] = deque()
        self.chat_responder: Callable[[dict], Any] | None = None
        self.structured_output = True  # False: response_format json_schema is a 400, as some servers do
        # As a careless provider or proxy might: every error quotes the key the request carried, in
        # its message ("Incorrect API key provided: ..."), its type, its code and its request id.
        self.echo_key_in_errors = False

    def reset(self) -> None:
        super().reset()
        with self.lock:
            self.overrides.clear()
            self.failures.clear()
            self.manglers.clear()
            self.chat_replies.clear()
            self.chat_responder = None
            self.structured_output = True
            self.echo_key_in_errors = False

    def queue_chat(self, *replies: Chat | dict | str, times: int = 1) -> None:
        with self.lock:
            for _ in range(times):
                self.chat_replies.extend(as_chat(reply) for reply in replies)

    @property
    def chat_requests(self) -> list[dict]:
        """The bodies of the Chat Completions requests received, in order."""
        return [r.body for r in self.requests if r.path == "/v1/chat/completions"]

    def override(self, text: str, vector: list[float]) -> None:
        with self.lock:
            self.overrides[text] = list(vector)

    def fail(self, status: int, times: int = 1) -> None:
        with self.lock:
            self.failures.extend([status] * times)

    def mangle(self, rewrite: Callable[[dict], dict]) -> None:
        with self.lock:
            self.manglers.append(rewrite)

    @property
    def embedding_requests(self) -> list[dict]:
        """The bodies of the Embeddings requests received, in order."""
        return [r.body for r in self.requests if r.path == "/v1/embeddings"]

    def vector(self, text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
        """The vector this server gives `text`."""
        with self.lock:
            override = self.overrides.get(text)
        return override if override is not None else hashed_bag_of_words(text, dimensions)

    def error_reply(self, status: int, message: str) -> Response:
        return error_response(status, message)

    def handle(self, request: RecordedRequest) -> Response:
        if request.method == "POST" and request.path == "/v1/chat/completions":
            return self._chat(request)
        if request.method != "POST" or request.path != "/v1/embeddings":
            return error_response(404, f"no route {request.method} {request.path}")
        if not bearer_token(request.headers.get("authorization", "")):
            return error_response(401, "Incorrect API key provided")
        problem = request_problem(request.body)
        if problem:
            return error_response(400, problem)
        with self.lock:
            failure = self.failures.popleft() if self.failures else None
            rewrite = self.manglers.popleft() if self.manglers else None
        if failure:
            return self._error(request, failure)
        reply = self._reply(request.body)
        return Response(200, rewrite(reply) if rewrite else reply)

    def _reply(self, body: dict) -> dict:
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        dimensions = body.get("dimensions", DEFAULT_DIMENSIONS)
        as_base64 = body.get("encoding_format") == "base64"
        tokens = sum(max(1, len(text.split())) for text in texts)
        return {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": encoded(vector, as_base64)}
                for i, vector in enumerate(self.vector(text, dimensions) for text in texts)
            ],
            "model": body["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _chat(self, request: RecordedRequest) -> Response:
        if not bearer_token(request.headers.get("authorization", "")):
            return error_response(401, "Incorrect API key provided")
        body = request.body
        problem = chat_problem(body)
        if problem:
            return error_response(400, problem)
        if "response_format" in body and not self.structured_output:
            return error_response(400, "response_format: json_schema is not supported by this server")
        with self.lock:
            reply = self.chat_replies.popleft() if self.chat_replies else None
            responder = self.chat_responder
        if reply is None:
            reply = as_chat(responder(as_messages_request(body)) if responder else {})
        if reply.status >= 400:
            return self._error(request, reply.status)
        return Response(200, chat_completion(body, reply))

    def _error(self, request: RecordedRequest, status: int) -> Response:
        if not self.echo_key_in_errors:
            return error_response(status, f"fake error {status}")
        key = bearer_token(request.headers.get("authorization", "")) or ""
        error = {
            "message": f"Incorrect API key provided: {key}",
            "type": f"invalid_key {key}",
            "param": None,
            "code": f"invalid_api_key {key}",
        }
        return Response(
            status, {"error": error}, headers={"retry-after-ms": "1", "x-request-id": f"req_{key}"}
        )


def as_chat(reply: Chat | dict | str) -> Chat:
    if isinstance(reply, Chat):
        return reply
    return Chat(text=reply) if isinstance(reply, str) else Chat(data=reply)


def chat_problem(body: Any) -> str | None:
    """What an OpenAI-compatible server would reject in a Chat Completions body."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            return "messages: each message needs a role of system, user or assistant"
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url":
                    if not str(part.get("image_url", {}).get("url", "")).startswith("data:image/"):
                        return "image_url.url: a data URL of an image is expected"
                elif part.get("type") != "text":
                    return f"content part type {part.get('type')!r} is not supported"
        elif not isinstance(content, str):
            return "messages: content must be a string or a list of parts"
    output_format = body.get("response_format")
    if output_format is not None and (
        output_format.get("type") != "json_schema"
        or not isinstance(output_format.get("json_schema", {}).get("schema"), dict)
    ):
        return "response_format: json_schema with a schema object is expected"
    if body.get("reasoning_effort") not in (None, "low", "medium", "high"):
        return "reasoning_effort: must be low, medium or high"
    return None


def as_messages_request(body: dict) -> dict:
    """The Chat Completions body in the Messages API's shape: system apart, image parts as
    base64 image blocks (what the Anthropic fake's responders read)."""
    system = "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")
    messages = []
    for message in body["messages"]:
        if message["role"] == "system":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = [_as_block(part) for part in content]
        messages.append({"role": message["role"], "content": content})
    return {"model": body["model"], "system": system, "messages": messages}


def _as_block(part: dict) -> dict:
    if part["type"] != "image_url":
        return part
    head, _, data = part["image_url"]["url"].partition(",")
    media_type = head.removeprefix("data:").removesuffix(";base64")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def chat_completion(body: dict, reply: Chat) -> dict:
    text = reply.answer_text
    prompt = " ".join(
        m["content"] if isinstance(m["content"], str) else " ".join(p.get("text", "") for p in m["content"])
        for m in body["messages"]
    )
    reasoning = 12 if body.get("reasoning_effort") else 0
    usage = {
        "prompt_tokens": max(1, len(prompt.split())),
        "completion_tokens": len(text.split()) + reasoning,
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    completion = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": reply.refusal},
                "finish_reason": reply.finish_reason,
            }
        ],
    }
    if reply.usage is not None:
        completion["usage"] = {**usage, **reply.usage}
    return completion


def request_problem(body: Any) -> str | None:
    """What the real API would reject in the body (the part of it these tests exercise)."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "model: field required"
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else texts
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return "input: a string or a non-empty array of strings is required"
    if len(texts) > MAX_INPUTS:
        return f"input: at most {MAX_INPUTS} inputs per request"
    if any(not text for text in texts):
        return "input: empty strings are not allowed"
    if "dimensions" in body and not body["model"].startswith("text-embedding-3"):
        return f"dimensions: not supported by {body['model']}"
    if body.get("encoding_format") not in (None, "float", "base64"):
        return "encoding_format: must be float or base64"
    return None


def bearer_token(authorization: str) -> str | None:
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme == "Bearer" and token.strip() else None


def hashed_bag_of_words(text: str, dimensions: int) -> list[float]:
    """Each word adds or takes 1 at a position its hash picks; normalized. Only the words'
    positions are computed (a few), not the whole vector: a fake that answers instantly leaves the
    benches' figures to the service."""
    words = re.findall(r"\w+", text.lower()) or [text]
    weights: dict[int, float] = {}
    for word in words:
        digest = hashlib.sha256(word.encode()).digest()
        position = int.from_bytes(digest[:4], "big") % dimensions
        weights[position] = weights.get(position, 0.0) + (1.0 if digest[4] & 1 else -1.0)
    norm = math.sqrt(sum(x * x for x in weights.values())) or 1.0  # whole numbers: exact in any order
    vector = [0.0] * dimensions
    for position, weight in weights.items():
        vector[position] = weight / norm
    return vector


def encoded(vector: list[float], as_base64: bool) -> list[float] | str:
    if not as_base64:
        return vector
    floats = array("f", vector)
    if sys.byteorder != "little":
        floats.byteswap()
    return base64.b64encode(floats.tobytes()).decode()


def error_response(status: int, message: str) -> Response:
    error = {"message": message, "type": ERROR_TYPES.get(status, "server_error"), "param": None, "code": None}
    return Response(status, {"error": error}, headers={"retry-after-ms": "1", "x-request-id": "req_fake"})


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / ((math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))) or 1.0)
