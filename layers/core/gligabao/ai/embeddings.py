"""Embeddings from OpenAI's Embeddings API: one request for all the texts of a call.

Requests are split only where the provider's per-request limits force it. Each
request records an `Inference`, failed ones too. The SDK is imported on first use.
"""

from __future__ import annotations

import functools
import math
import time
from typing import TYPE_CHECKING, Any

from gligabao.ai.prices import cost_usd
from gligabao.errors import GbError, ProviderError
from gligabao.observability.inferences import CallContext, Inference

if TYPE_CHECKING:
    from openai.types import CreateEmbeddingResponse

STAGE_HEADER = "x-gligabao-stage"
MAX_INPUTS_PER_REQUEST = 2048
MAX_TOKENS_PER_REQUEST = 300_000
# No tokenizer in the Lambda: one token per 3 characters overestimates English and most prose.
CHARS_PER_TOKEN = 3
MAX_RETRIES = 2
DEFAULT_TIMEOUT_S = 30.0
MIN_TIMEOUT_S = 1.0
DEADLINE_MARGIN_S = 2.0


class Embedder:
    """Vectors for texts, in the configured model and dimensions."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        dimensions: int,
        base_url: str | None = None,
        max_retries: int = MAX_RETRIES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ):
        self.model = model
        self.dimensions = dimensions
        self._base_url = base_url
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self._api_key = api_key

    def __repr__(self) -> str:  # never the key
        return f"Embedder(model={self.model!r}, dimensions={self.dimensions})"

    @functools.cached_property
    def client(self) -> Any:
        import openai

        return openai.OpenAI(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=self.max_retries,
            timeout=self.timeout_s,
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
        response = None
        try:
            response = self._send(batch, stage, self._timeout_s(deadline))
            vectors = self._checked_vectors(response, len(batch))
        except Exception as error:
            call.record(self._inference(stage, response, started, error=_short_error(error)))
            raise
        call.record(self._inference(stage, response, started))
        return vectors

    def _send(self, batch: list[str], stage: str, timeout_s: float) -> CreateEmbeddingResponse:
        import openai

        options: dict[str, Any] = {"extra_headers": {STAGE_HEADER: stage}, "timeout": timeout_s}
        if accepts_dimensions(self.model):
            options["dimensions"] = self.dimensions
        try:
            return self.client.embeddings.create(input=batch, model=self.model, **options)
        except openai.OpenAIError as error:
            # Not chained: the SDK's error quotes the provider's reply, which may quote the texts.
            raise provider_error(error) from None
        except ValueError:  # the SDK's own check of the reply: "No embedding data received"
            raise ProviderError("embeddings call failed: the reply held no vectors") from None

    def _checked_vectors(self, response: CreateEmbeddingResponse, expected: int) -> list[list[float]]:
        data = sorted(response.data, key=lambda item: item.index)
        if [item.index for item in data] != list(range(expected)):
            raise ProviderError(f"embeddings reply held {len(data)} vectors for {expected} texts")
        wrong = next((item for item in data if len(item.embedding) != self.dimensions), None)
        if wrong is not None:
            raise ProviderError(
                f"embeddings reply had {len(wrong.embedding)} dimensions, expected {self.dimensions}"
            )
        return [list(item.embedding) for item in data]

    def _timeout_s(self, deadline: float | None) -> float:
        if deadline is None:
            return self.timeout_s
        left = deadline - time.monotonic() - DEADLINE_MARGIN_S
        if left < MIN_TIMEOUT_S:
            raise ProviderError("embeddings call not made: no time left before the deadline")
        return min(self.timeout_s, left)

    def _inference(
        self, stage: str, response: CreateEmbeddingResponse | None, started: float, error: str | None = None
    ) -> Inference:
        input_tokens = response.usage.prompt_tokens if response is not None else None
        return Inference(
            stage=stage,
            model=self.model,
            reasoning=None,
            input_tokens=input_tokens,
            output_tokens=0 if response is not None else None,
            thinking_tokens=None,
            cost_usd=cost_usd(self.model, input_tokens, 0) if response is not None else None,
            duration_ms=round((time.monotonic() - started) * 1000),
            ok=error is None,
            error=error,
        )


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


def provider_error(error: Exception) -> ProviderError:
    """A 502 naming what failed; never the key or the texts."""
    import openai

    if isinstance(error, openai.APITimeoutError):
        return ProviderError("embeddings call timed out")
    if isinstance(error, openai.APIConnectionError):
        return ProviderError("embeddings call failed: could not reach the provider")
    if isinstance(error, openai.APIStatusError):
        kind = f" {error.type}" if isinstance(getattr(error, "type", None), str) else ""
        request = f" (request {error.request_id})" if getattr(error, "request_id", None) else ""
        return ProviderError(f"embeddings call failed: HTTP {error.status_code}{kind}{request}")
    return ProviderError(f"embeddings call failed: {type(error).__name__}")


def _short_error(error: Exception) -> str:
    return error.message if isinstance(error, GbError) else f"unexpected {type(error).__name__}"
