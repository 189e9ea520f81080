"""A fake OpenAI Embeddings API (POST /v1/embeddings) for the real `openai` SDK.

Vectors are deterministic: a bag of the text's lowercase words, each hashed to a
signed position, L2-normalised. Identical texts have cosine 1; texts sharing most
words have a high cosine; unrelated texts are near 0.

    fake_openai.override("Alice", [1.0, 0.0, ...])   # this text gets exactly this vector
    fake_openai.fail(500, times=3)                   # the next requests fail (every attempt)
    fake_openai.mangle(lambda reply: {...})          # rewrite the next reply (wrong counts, sizes)
    fake_openai.inject(Fault.never_answer())         # transport faults and raw bodies (fake_http.py)
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import struct
from collections import deque
from collections.abc import Callable
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


class FakeOpenAI(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.overrides: dict[str, list[float]] = {}
        self.failures: deque[int] = deque()
        self.manglers: deque[Callable[[dict], dict]] = deque()

    def reset(self) -> None:
        super().reset()
        with self.lock:
            self.overrides.clear()
            self.failures.clear()
            self.manglers.clear()

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
            return error_response(failure, f"fake error {failure}")
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
    words = re.findall(r"\w+", text.lower()) or [text]
    vector = [0.0] * dimensions
    for word in words:
        digest = hashlib.sha256(word.encode()).digest()
        position = int.from_bytes(digest[:4], "big") % dimensions
        vector[position] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def encoded(vector: list[float], as_base64: bool) -> list[float] | str:
    if not as_base64:
        return vector
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()


def error_response(status: int, message: str) -> Response:
    error = {"message": message, "type": ERROR_TYPES.get(status, "server_error"), "param": None, "code": None}
    return Response(status, {"error": error}, headers={"retry-after-ms": "1", "x-request-id": "req_fake"})


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / ((math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))) or 1.0)
