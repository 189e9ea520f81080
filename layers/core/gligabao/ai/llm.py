"""The LLM: one structured reply per call, from Anthropic's Messages API or Claude on Amazon Bedrock.

Every call, failed or not, records one `Inference` on the request's `CallContext` (its retries
included: ai/retries.py). The SDK sends the requests; the reply's body is read and checked here
against what the protocol promises (`MessagesReply`), so a broken reply is a 502 naming the
problem, never an error of the SDK's unvalidated objects. The SDK is imported on the first call:
importing it costs seconds of cold start.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from gligabao.ai.prices import Price, base_model, cost_usd, web_search_cost_usd
from gligabao.ai.replies import parsed_reply, stage_reply
from gligabao.ai.retries import Failure, RetryPolicy, call_with_retries, connection_failure, status_failure
from gligabao.errors import GbError, NotConfigured, ProviderError
from gligabao.observability.inferences import CallCancelled, CallContext, Inference

if TYPE_CHECKING:
    import pydantic

Reply = TypeVar("Reply", bound="pydantic.BaseModel")
Result = TypeVar("Result")

STAGE_HEADER = "x-gligabao-stage"
THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 16384}
TRUNCATED_STOP_REASONS = ("max_tokens", "model_context_window_exceeded")


class ContentBlock(BaseModel):
    """A block of the reply; only text blocks are read (thinking and future kinds are skipped)."""

    type: str
    text: str | None = None


class OutputDetails(BaseModel):
    thinking_tokens: int | None = Field(None, ge=0)


class ServerToolUsage(BaseModel):
    """The server-side tools a call ran (the web search tool), billed per use beside the tokens."""

    web_search_requests: int = Field(0, ge=0)


class Usage(BaseModel):
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cache_read_input_tokens: int | None = Field(None, ge=0)
    cache_creation_input_tokens: int | None = Field(None, ge=0)
    output_tokens_details: OutputDetails | None = None
    server_tool_use: ServerToolUsage | None = None


class StopDetails(BaseModel):
    category: str | None = None


class MessagesReply(BaseModel):
    """What gligabao reads of a Messages API reply; anything else in it is ignored. A call that
    reads more of it (ai/web_search.py: the search blocks) gives a subclass of its own."""

    model_config = ConfigDict(extra="ignore")

    content: list[ContentBlock]
    stop_reason: str | None
    stop_details: StopDetails | None = None
    usage: Usage


Message = TypeVar("Message", bound=MessagesReply)


class LLM:
    """Claude through the Anthropic API (an API key) or Amazon Bedrock (IAM credentials)."""

    def __init__(
        self,
        *,
        default_model: str,
        api_key: str | None = None,
        provider: str = "anthropic",
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, Price] | None = None,
    ):
        self.provider = provider
        self.default_model = default_model
        self.retry = retry or RetryPolicy.for_llm()
        self.prices = dict(prices or {})  # GB_MODEL_PRICES, before the package's table
        self._api_key = api_key
        self._base_url = base_url

    def __repr__(self) -> str:  # never the key
        return f"LLM(provider={self.provider!r}, default_model={self.default_model!r})"

    @functools.cached_property
    def client(self) -> Any:
        return build_client(self.provider, self._api_key, self._base_url, self.retry.attempt_timeout_s)

    def complete(
        self,
        call: CallContext,
        stage: str,
        *,
        system: str,
        content: str | list[dict],
        reply_model: type[Reply],
        reasoning: str = "none",
        model: str | None = None,
        max_tokens: int = 4096,
        deadline: float | None = None,
    ) -> Reply:
        """The model's reply to `content`, validated against `reply_model`.

        `deadline` is a `time.monotonic()` instant the call must end before (the Lambda's
        remaining time): attempts, retries and waits all fit before it. Raises ProviderError
        (502) on any failure.
        """
        model = model or self.default_model
        return self.exchange(
            call,
            stage,
            model=model,
            reasoning=reasoning,
            request=lambda: build_request(stage, system, content, reply_model, reasoning, model, max_tokens),
            read=lambda message: reply_from(message, reply_model, stage),
            deadline=deadline,
        )

    def exchange(
        self,
        call: CallContext,
        stage: str,
        *,
        model: str,
        reasoning: str,
        request: Callable[[], dict[str, Any]],
        read: Callable[[Message], Result],
        shape: type[Message] = MessagesReply,
        deadline: float | None = None,
    ) -> Result:
        """One Messages API call, the path every call of this LLM takes: `request()` sent (retried
        within `deadline`), its reply body read as `shape`, then `read` into the call's result; one
        `Inference` recorded on `call`, failed or not. Raises ProviderError (502) on any failure."""
        started = time.monotonic()
        message = None
        try:
            body = request()
            message = call_with_retries(
                lambda timeout_s: self._send(stage, body, timeout_s, shape),
                around_attempt=call.model_call,
                policy=self.retry,
                deadline=deadline,
                failure_of=failure_of,
                what=f"LLM call of stage {stage}",
                secrets=(self._api_key,),
            ).value
            result = read(message)
        except CallCancelled:  # not made: nothing to record
            raise
        except Exception as error:
            call.record(
                _inference(stage, model, reasoning, message, started, self.prices, _short_error(error))
            )
            raise
        call.record(_inference(stage, model, reasoning, message, started, self.prices))
        return result

    def _send(
        self, stage: str, request: dict[str, Any], timeout_s: float, shape: type[Message] = MessagesReply
    ) -> Message:
        """One attempt: the SDK's errors propagate (to be retried or not); a 200 whose body is not
        a Messages reply is a ProviderError at once."""
        raw = self.client.messages.with_raw_response.create(**request, timeout=timeout_s)
        return messages_reply(raw.http_response.content, stage, shape)


def build_client(provider: str, api_key: str | None, base_url: str | None, timeout_s: float) -> Any:
    """The SDK's client, without its own retries (ai/retries.py retries, within the deadline)."""
    import anthropic

    from gligabao.ai.transport import deadline_bound_client

    options = {
        "max_retries": 0,
        "timeout": timeout_s,
        "http_client": deadline_bound_client(anthropic.DefaultHttpxClient),
    }
    try:
        if provider == "bedrock":
            # IAM credentials and the region come from the Lambda's environment.
            return anthropic.AnthropicBedrock(**options)
        return anthropic.Anthropic(api_key=api_key, base_url=base_url, **options)
    except (ValueError, anthropic.AnthropicError) as error:  # e.g. Bedrock without a region
        raise NotConfigured(f"LLM not configured: {error}") from None


def messages_reply(body: bytes, stage: str, shape: type[Message] = MessagesReply) -> Message:
    return parsed_reply(body, shape, f"LLM reply of stage {stage} was not a Messages API reply")


def build_request(
    stage: str,
    system: str,
    content: str | list[dict],
    reply_model: type[pydantic.BaseModel],
    reasoning: str,
    model: str,
    max_tokens: int,
) -> dict[str, Any]:
    request = base_request(stage, system, content, reasoning, model, max_tokens)
    if supports_structured_output(model):
        request["output_config"] = {"format": json_schema_format(reply_model)}
    return request


def base_request(
    stage: str, system: str, content: str | list[dict], reasoning: str, model: str, max_tokens: int
) -> dict[str, Any]:
    """What every request of a stage carries: the model, the prompt, the thinking level and the
    stage's header (which the tests' fakes read)."""
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": content}],
        "extra_headers": {STAGE_HEADER: stage},
        **thinking_params(reasoning, max_tokens),
    }


def thinking_params(level: str, max_tokens: int) -> dict[str, Any]:
    """Extended thinking for a reasoning level; max_tokens raised so the budget leaves room for the answer."""
    budget = THINKING_BUDGETS.get(level)
    if budget is None:
        # Said explicitly: newer models may think when `thinking` is left out.
        return {"thinking": {"type": "disabled"}}
    return {"thinking": {"type": "enabled", "budget_tokens": budget}, "max_tokens": budget + max_tokens}


def supports_structured_output(model: str) -> bool:
    # Structured output came with the Claude 4.x generation; older models reject `output_config`.
    return not base_model(model).startswith("claude-3")


@functools.cache
def json_schema_format(reply_model: type[pydantic.BaseModel]) -> dict[str, Any]:
    import anthropic

    return {"type": "json_schema", "schema": anthropic.transform_schema(reply_model)}


def reply_from(message: MessagesReply, reply_model: type[Reply], stage: str) -> Reply:
    """The validated reply, or a ProviderError saying why there is none."""
    check_finished(message, stage)
    return stage_reply(reply_text(message), reply_model, stage)


def reply_text(message: MessagesReply) -> str:
    """The model's answer: its text blocks, one after the other."""
    return "".join(block.text or "" for block in message.content if block.type == "text")


def check_finished(message: MessagesReply, stage: str) -> None:
    """A ProviderError when the model did not finish its answer: cut short, or refused."""
    if message.stop_reason in TRUNCATED_STOP_REASONS:
        raise ProviderError(f"LLM reply of stage {stage} was truncated ({message.stop_reason})")
    if message.stop_reason == "refusal":
        raise ProviderError(f"LLM refused to answer stage {stage}{_refusal_category(message)}")


def failure_of(error: Exception) -> Failure:
    """What a failed attempt says, for the retry policy and the 502; never the key or the prompt
    (the provider's own message may quote either, so it is never used)."""
    import anthropic

    if isinstance(error, anthropic.APITimeoutError):
        return Failure("timed out", retryable=True)
    if isinstance(error, anthropic.APIConnectionError):
        return connection_failure(error)
    if isinstance(error, anthropic.APIStatusError):
        return status_failure(error)
    if isinstance(error, anthropic.AnthropicError):
        return Failure(type(error).__name__, retryable=False)
    raise error


def _refusal_category(message: MessagesReply) -> str:
    category = message.stop_details.category if message.stop_details is not None else None
    return f" ({category})" if category else ""


def _short_error(error: Exception) -> str:
    return error.message if isinstance(error, GbError) else f"unexpected {type(error).__name__}"


def _inference(
    stage: str,
    model: str,
    reasoning: str,
    message: MessagesReply | None,
    started: float,
    prices: Mapping[str, Price],
    error: str | None = None,
) -> Inference:
    usage = message.usage if message is not None else None
    return Inference(
        stage=stage,
        model=model,
        reasoning=reasoning,
        input_tokens=_input_tokens(usage),
        output_tokens=usage.output_tokens if usage is not None else None,
        thinking_tokens=_thinking_tokens(usage),
        cost_usd=usage_cost_usd(model, usage, prices),
        duration_ms=round((time.monotonic() - started) * 1000),
        ok=error is None,
        error=error,
        cache_write_tokens=usage.cache_creation_input_tokens if usage is not None else None,
        cached_tokens=usage.cache_read_input_tokens if usage is not None else None,
        web_searches=web_searches_billed(usage),
    )


def _input_tokens(usage: Usage | None) -> int | None:
    """The whole input: Anthropic counts the cache's reads and writes apart from input_tokens."""
    if usage is None:
        return None
    cached = (usage.cache_read_input_tokens or 0) + (usage.cache_creation_input_tokens or 0)
    return usage.input_tokens + cached


def usage_cost_usd(model: str, usage: Usage | None, prices: Mapping[str, Price]) -> float | None:
    """The tokens at the model's price, and the web searches the call ran at theirs."""
    if usage is None:
        return None
    tokens = cost_usd(
        model,
        usage.input_tokens,
        usage.output_tokens,
        prices,
        cache_write_tokens=usage.cache_creation_input_tokens,
        cache_read_tokens=usage.cache_read_input_tokens,
    )
    searches = web_searches_billed(usage)
    if tokens is None or not searches:
        return tokens  # an unpriced model stays unpriced: a sum without its tokens would be a guess
    return round(tokens + web_search_cost_usd(searches), 8)


def web_searches_billed(usage: Usage | None) -> int | None:
    """The searches the call ran; None for a call that could run none (no server tool reported)."""
    tools = usage.server_tool_use if usage is not None else None
    return tools.web_search_requests if tools is not None else None


def _thinking_tokens(usage: Usage | None) -> int | None:
    details = usage.output_tokens_details if usage is not None else None
    return details.thinking_tokens if details is not None else None
