"""The LLM through an OpenAI-compatible Chat Completions API (`GB_LLM_PROVIDER=openai`): OpenAI,
or a server of your own at OPENAI_BASE_URL (Ollama, vLLM, llama.cpp, LiteLLM...).

The same contract as ai/llm.py: one structured reply per call, every call recorded (its retries
included, within the deadline: ai/retries.py and ai/transport.py), a broken reply a 502 naming the
problem. Structured output: the reply's JSON schema is sent as `response_format` (json_schema);
a server that refuses it (a 400 naming response_format) is asked again without it, and from then
on never with it for that model; either way the reply is parsed tolerantly (ai/json_reply.py), as
some servers accept the schema and still wrap the JSON in prose or code fences. Prices come from
the configured table (GB_MODEL_PRICES) then the package's; a model neither knows costs null.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gligabao.ai.embeddings import failure_of as openai_failure
from gligabao.ai.llm import STAGE_HEADER, THINKING_BUDGETS, _short_error
from gligabao.ai.prices import Price, cost_usd
from gligabao.ai.replies import parsed_reply, stage_reply
from gligabao.ai.retries import Failure, RetryPolicy, call_with_retries
from gligabao.errors import NotConfigured, ProviderError
from gligabao.observability.inferences import CallCancelled, CallContext, Inference

TRUNCATED_FINISH_REASONS = ("length",)
REFUSED_FINISH_REASONS = ("content_filter",)
# What a server that does not take `response_format` json_schema says in its 400 (or 422).
_STRUCTURED_OUTPUT_REFUSED = re.compile(r"response_format|json_schema|structured output", re.IGNORECASE)
# Reasoning models served locally (DeepSeek-R1, Qwen3...) may think aloud before the JSON.
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


class CompletionTokensDetails(BaseModel):
    reasoning_tokens: int | None = Field(None, ge=0)


class PromptTokensDetails(BaseModel):
    cached_tokens: int | None = Field(None, ge=0)


class ChatUsage(BaseModel):
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None

    @property
    def cached_tokens(self) -> int | None:
        """Of prompt_tokens, those read from the prompt cache (OpenAI bills no cache writes)."""
        details = self.prompt_tokens_details
        return details.cached_tokens if details is not None else None


class ChatMessage(BaseModel):
    content: str | None = None
    refusal: str | None = None


class ChatChoice(BaseModel):
    message: ChatMessage
    finish_reason: str | None = None


class ChatReply(BaseModel):
    """What gligabao reads of a Chat Completions reply; anything else in it is ignored. Some
    servers send no usage: the call is then recorded without tokens and without a cost."""

    model_config = ConfigDict(extra="ignore")

    choices: list[ChatChoice] = Field(min_length=1)
    usage: ChatUsage | None = None


class StructuredOutputRefused(Exception):
    """The server does not take `response_format` json_schema: ask again without it."""


class OpenAICompatibleLLM:
    """Every LLM stage through Chat Completions, with the SDK's client and gligabao's retries."""

    provider = "openai"

    def __init__(
        self,
        *,
        api_key: str,
        default_model: str,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, Price] | None = None,
        structured_output: str = "auto",  # auto: try it, drop it where refused; on; off
    ):
        self.default_model = default_model
        self.retry = retry or RetryPolicy.for_llm()
        self.prices = dict(prices or {})
        self.structured_output = structured_output
        self._api_key = api_key
        self._base_url = base_url
        self._without_schema: set[str] = set()  # models whose server refused response_format
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"OpenAICompatibleLLM(default_model={self.default_model!r}, base_url={self._base_url!r})"

    @functools.cached_property
    def client(self) -> Any:
        import openai

        from gligabao.ai.transport import deadline_bound_client

        try:
            return openai.OpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                max_retries=0,  # ai/retries.py retries, within the deadline
                timeout=self.retry.attempt_timeout_s,
                http_client=deadline_bound_client(openai.DefaultHttpxClient),
            )
        except openai.OpenAIError as error:
            raise NotConfigured(f"LLM not configured: {error}") from None

    def complete(
        self,
        call: CallContext,
        stage: str,
        *,
        system: str,
        content: str | list[dict],
        reply_model: type[BaseModel],
        reasoning: str = "none",
        model: str | None = None,
        max_tokens: int = 4096,
        deadline: float | None = None,
    ) -> Any:
        """The model's reply to `content`, validated against `reply_model`; ProviderError (502) on
        any failure. `deadline`: a `time.monotonic()` instant every attempt ends before."""
        model = model or self.default_model
        started = time.monotonic()
        reply = None
        try:
            request = build_request(stage, system, content, reasoning, model, max_tokens)
            if self._asks_schema(model):
                try:
                    reply = self._call(
                        call, stage, {**request, "response_format": response_format(reply_model)}, deadline
                    )
                except StructuredOutputRefused:
                    with self._lock:
                        self._without_schema.add(model)
            if reply is None:
                reply = self._call(call, stage, request, deadline)
            result = reply_from(reply, reply_model, stage)
        except CallCancelled:  # not made: nothing to record
            raise
        except Exception as error:
            call.record(self._inference(stage, model, reasoning, reply, started, error=_short_error(error)))
            raise
        call.record(self._inference(stage, model, reasoning, reply, started))
        return result

    def _asks_schema(self, model: str) -> bool:
        if self.structured_output == "off":
            return False
        with self._lock:
            return self.structured_output == "on" or model not in self._without_schema

    def _call(
        self, call: CallContext, stage: str, request: dict[str, Any], deadline: float | None
    ) -> ChatReply:
        return call_with_retries(
            lambda timeout_s: self._send(stage, request, timeout_s),
            around_attempt=call.model_call,
            policy=self.retry,
            deadline=deadline,
            failure_of=self._failure_of(asked_schema="response_format" in request),
            what=f"LLM call of stage {stage}",
            secrets=(self._api_key,),
        ).value

    def _send(self, stage: str, request: dict[str, Any], timeout_s: float) -> ChatReply:
        """One attempt: the SDK's errors propagate (to be retried or not); a 200 whose body is not
        a Chat Completions reply is a ProviderError at once."""
        raw = self.client.chat.completions.with_raw_response.create(**request, timeout=timeout_s)
        return chat_reply(raw.http_response.content, stage)

    def _failure_of(self, *, asked_schema: bool):
        def failure_of(error: Exception) -> Failure:
            if asked_schema and self.structured_output == "auto" and refuses_structured_output(error):
                raise StructuredOutputRefused() from None
            return openai_failure(error)

        return failure_of

    def _inference(
        self,
        stage: str,
        model: str,
        reasoning: str,
        reply: ChatReply | None,
        started: float,
        error: str | None = None,
    ) -> Inference:
        usage = reply.usage if reply is not None else None
        details = usage.completion_tokens_details if usage is not None else None
        return Inference(
            stage=stage,
            model=model,
            reasoning=reasoning,
            input_tokens=usage.prompt_tokens if usage is not None else None,
            output_tokens=usage.completion_tokens if usage is not None else None,
            thinking_tokens=details.reasoning_tokens if details is not None else None,
            cost_usd=self._cost(model, usage),
            duration_ms=round((time.monotonic() - started) * 1000),
            ok=error is None,
            error=error,
            cached_tokens=usage.cached_tokens if usage is not None else None,
        )

    def _cost(self, model: str, usage: ChatUsage | None) -> float | None:
        if usage is None:
            return None
        cached = min(usage.cached_tokens or 0, usage.prompt_tokens)  # prompt_tokens counts them
        return cost_usd(
            model,
            usage.prompt_tokens - cached,
            usage.completion_tokens,
            self.prices,
            cache_read_tokens=cached,
        )


def build_request(
    stage: str, system: str, content: str | list[dict], reasoning: str, model: str, max_tokens: int
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": chat_content(content)},
        ],
        "max_tokens": max_tokens,
        "extra_headers": {STAGE_HEADER: stage},
    }
    budget = THINKING_BUDGETS.get(reasoning)
    if budget is not None:  # "none" sends nothing: models without reasoning refuse the parameter
        request["reasoning_effort"] = reasoning
        request["max_tokens"] = budget + max_tokens  # the reasoning counts in the completion's tokens
    return request


def chat_content(content: str | list[dict]) -> str | list[dict]:
    """The user content in Chat Completions' parts: a prompt's image blocks (the Messages API's
    base64 source) become image_url parts with a data URL."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.get("type") == "image":
            source = block["source"]
            url = f"data:{source['media_type']};base64,{source['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": block.get("text", "")})
    return parts


@functools.cache
def response_format(reply_model: type[BaseModel]) -> dict[str, Any]:
    # Not strict: OpenAI's strict mode wants every property required, which the tolerant reply
    # models (defaults for what a model may leave out) are not; servers then guide, not enforce.
    return {
        "type": "json_schema",
        "json_schema": {
            "name": reply_model.__name__,
            "schema": reply_model.model_json_schema(),
            "strict": False,
        },
    }


def chat_reply(body: bytes, stage: str) -> ChatReply:
    return parsed_reply(body, ChatReply, f"LLM reply of stage {stage} was not a Chat Completions reply")


def reply_from(reply: ChatReply, reply_model: type[BaseModel], stage: str) -> Any:
    """The validated reply, or a ProviderError saying why there is none."""
    choice = reply.choices[0]
    if choice.finish_reason in TRUNCATED_FINISH_REASONS:
        raise ProviderError(f"LLM reply of stage {stage} was truncated ({choice.finish_reason})")
    if choice.message.refusal or choice.finish_reason in REFUSED_FINISH_REASONS:
        raise ProviderError(f"LLM refused to answer stage {stage}")
    text = _THINKING.sub("", choice.message.content or "")
    return stage_reply(text, reply_model, stage)


def refuses_structured_output(error: Exception) -> bool:
    """A 400 or 422 of the server about `response_format`: it does not take a JSON schema."""
    import openai

    if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 422):
        return False
    return bool(_STRUCTURED_OUTPUT_REFUSED.search(f"{error.message} {error.body}"))
