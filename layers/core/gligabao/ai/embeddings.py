"""Embeddings from OpenAI's Embeddings API: one request for all the texts of a call.

Requests are split only where the provider's per-request limits force it. Each request records
one `Inference` (its retries included: ai/retries.py), failed ones too. The SDK sends the
requests; the reply's body is read and checked here (`EmbeddingsReply`): every vector there, of
the configured size, of finite numbers, or a 502 saying what is wrong. The SDK is imported on
first use.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import struct
import sys
import time
from array import array
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AllowInfNan, BaseModel, ConfigDict, Field, Strict

from gligabao.ai.prices import Price, cost_usd
from gligabao.ai.replies import parsed_reply
from gligabao.ai.retries import Failure, RetryPolicy, call_with_retries, connection_failure, status_failure
from gligabao.errors import GbError, ProviderError
from gligabao.observability.inferences import CallCancelled, CallContext, Inference

STAGE_HEADER = "x-gligabao-stage"
MAX_INPUTS_PER_REQUEST = 2048
MAX_TOKENS_PER_REQUEST = 300_000
# No tokenizer in the Lambda: one token per 3 characters overestimates English and most prose.
CHARS_PER_TOKEN = 3
# Vectors travel as base64 of little-endian float32 (a quarter of the JSON of the numbers).
ENCODING_FORMAT = "base64"
FLOAT32 = struct.Struct("<f")

Number = Annotated[float, Strict(), AllowInfNan(False)]  # not a string, a boolean or NaN


class EmbeddingItem(BaseModel):
    index: int = Field(ge=0)
    embedding: str | list[Number]  # base64 as asked; a provider answering numbers is read too


class EmbeddingsUsage(BaseModel):
    prompt_tokens: int = Field(ge=0)


class EmbeddingsReply(BaseModel):
    """What gligabao reads of an Embeddings API reply; anything else in it is ignored."""

    model_config = ConfigDict(extra="ignore")

    data: list[EmbeddingItem]
    usage: EmbeddingsUsage


class Embedder:
    """Vectors for texts, in the configured model and dimensions."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        dimensions: int,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, Price] | None = None,
    ):
        self.model = model
        self.dimensions = dimensions
        self.prices = dict(prices or {})  # GB_MODEL_PRICES, before the package's table
        self.retry = retry or RetryPolicy.for_embeddings()
        self._base_url = base_url
        self._api_key = api_key

    def __repr__(self) -> str:  # never the key
        return f"Embedder(model={self.model!r}, dimensions={self.dimensions})"

    @functools.cached_property
    def client(self) -> Any:
        import openai

        from gligabao.ai.transport import deadline_bound_client

        # No retries of the SDK's own: ai/retries.py retries, within the deadline.
        return openai.OpenAI(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=0,
            timeout=self.retry.attempt_timeout_s,
            http_client=deadline_bound_client(openai.DefaultHttpxClient),
        )

    def embed(
        self, call: CallContext, texts: list[str], stage: str = "embed", *, deadline: float | None = None
    ) -> list[list[float]]:
        """One vector per text, in the texts' order; raises ProviderError (502) on any failure.

        `deadline` is a `time.monotonic()` instant the calls must end before.
        """
        vectors: list[list[float]] = []
        for batch in request_batches(texts):
            vectors.extend(self._embed_batch(call, batch, stage, deadline))
        return vectors

    def _embed_batch(
        self, call: CallContext, batch: list[str], stage: str, deadline: float | None
    ) -> list[list[float]]:
        started = time.monotonic()
        reply = None
        try:
            reply = call_with_retries(
                lambda timeout_s: self._send(batch, stage, timeout_s),
                around_attempt=call.model_call,
                policy=self.retry,
                deadline=deadline,
                failure_of=failure_of,
                what="embeddings call",
                secrets=(self._api_key,),
            ).value
            vectors = checked_vectors(reply, len(batch), self.dimensions)
        except CallCancelled:  # not made: nothing to record
            raise
        except Exception as error:
            call.record(self._inference(stage, reply, started, error=_short_error(error)))
            raise
        call.record(self._inference(stage, reply, started))
        return vectors

    def _send(self, batch: list[str], stage: str, timeout_s: float) -> EmbeddingsReply:
        """One attempt: the SDK's errors propagate (to be retried or not); a 200 whose body is not
        an Embeddings reply is a ProviderError at once."""
        options: dict[str, Any] = {
            "extra_headers": {STAGE_HEADER: stage},
            "timeout": timeout_s,
            "encoding_format": ENCODING_FORMAT,
        }
        if accepts_dimensions(self.model):
            options["dimensions"] = self.dimensions
        raw = self.client.embeddings.with_raw_response.create(input=batch, model=self.model, **options)
        return embeddings_reply(raw.http_response.content)

    def _inference(
        self, stage: str, reply: EmbeddingsReply | None, started: float, error: str | None = None
    ) -> Inference:
        input_tokens = reply.usage.prompt_tokens if reply is not None else None
        return Inference(
            stage=stage,
            model=self.model,
            reasoning=None,
            input_tokens=input_tokens,
            output_tokens=0 if reply is not None else None,
            thinking_tokens=None,
            cost_usd=cost_usd(self.model, input_tokens, 0, self.prices) if reply is not None else None,
            duration_ms=round((time.monotonic() - started) * 1000),
            ok=error is None,
            error=error,
        )


def embeddings_reply(body: bytes) -> EmbeddingsReply:
    return parsed_reply(body, EmbeddingsReply, "embeddings reply was not an Embeddings API reply")


def checked_vectors(reply: EmbeddingsReply, expected: int, dimensions: int) -> list[list[float]]:
    """One vector per text, in the texts' order, each of `dimensions` finite numbers."""
    data = sorted(reply.data, key=lambda item: item.index)
    if [item.index for item in data] != list(range(expected)):
        raise ProviderError(f"embeddings reply held {len(data)} vectors for {expected} texts")
    vectors = [decoded(item.embedding, item.index) for item in data]
    wrong = next((vector for vector in vectors if len(vector) != dimensions), None)
    if wrong is not None:
        raise ProviderError(f"embeddings reply had {len(wrong)} dimensions, expected {dimensions}")
    return vectors


def decoded(embedding: str | list[float], index: int) -> list[float]:
    """A vector from its base64 (little-endian float32) or its numbers; finite, or a ProviderError."""
    if isinstance(embedding, list):
        return embedding
    try:
        raw = base64.b64decode(embedding, validate=True)
    except binascii.Error:
        raise ProviderError(f"embeddings reply: vector {index} is not base64") from None
    if len(raw) % FLOAT32.size:
        raise ProviderError(f"embeddings reply: vector {index} is not a whole number of float32")
    floats = array("f", raw)  # the C loop; struct unpacking one float at a time cost ~10 ms a remember
    if sys.byteorder == "big":
        floats.byteswap()
    vector = floats.tolist()
    # One NaN or infinity makes the sum NaN or infinite; finite float32s cannot overflow a double's sum.
    if not math.isfinite(sum(vector)):
        raise ProviderError(f"embeddings reply: vector {index} holds a value that is not a finite number")
    return vector


def request_batches(texts: list[str]) -> list[list[str]]:
    """The texts in order, cut into as few requests as the per-request limits allow."""
    batches: list[list[str]] = []
    batch: list[str] = []
    batch_tokens = 0
    for text in texts:
        tokens = estimated_tokens(text)
        if batch and (len(batch) == MAX_INPUTS_PER_REQUEST or batch_tokens + tokens > MAX_TOKENS_PER_REQUEST):
            batches.append(batch)
            batch, batch_tokens = [], 0
        batch.append(text)
        batch_tokens += tokens
    if batch:
        batches.append(batch)
    return batches


def estimated_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def accepts_dimensions(model: str) -> bool:
    # Only the text-embedding-3 models can shorten their vectors; ada-002 rejects the parameter.
    return model.startswith("text-embedding-3")


def failure_of(error: Exception) -> Failure:
    """What a failed attempt says, for the retry policy and the 502; never the key or the texts."""
    import openai

    if isinstance(error, openai.APITimeoutError):
        return Failure("timed out", retryable=True)
    if isinstance(error, openai.APIConnectionError):
        return connection_failure(error)
    if isinstance(error, openai.APIStatusError):
        return status_failure(error)
    if isinstance(error, openai.OpenAIError):
        return Failure(type(error).__name__, retryable=False)
    raise error


def _short_error(error: Exception) -> str:
    return error.message if isinstance(error, GbError) else f"unexpected {type(error).__name__}"
