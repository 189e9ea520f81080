"""The LLM: one structured reply per call, from Anthropic's Messages API or Claude on Amazon Bedrock.

Every call, failed or not, records an `Inference` on the request's `CallContext`.
The SDK is imported on the first call: importing it costs seconds of cold start.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any, TypeVar

from gligabao.ai.json_reply import NoJsonObject, extract_json_object
from gligabao.ai.prices import base_model, cost_usd
from gligabao.errors import GbError, NotConfigured, ProviderError
from gligabao.observability.inferences import CallContext, Inference

if TYPE_CHECKING:
    import pydantic
    from anthropic.types import Message, Usage

Reply = TypeVar("Reply", bound="pydantic.BaseModel")

STAGE_HEADER = "x-gligabao-stage"
THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 16384}
MAX_RETRIES = 2
DEFAULT_TIMEOUT_S = 60.0
MIN_TIMEOUT_S = 1.0
# Left after the call before the Lambda deadline, to record the failure and answer.
DEADLINE_MARGIN_S = 2.0
TRUNCATED_STOP_REASONS = ("max_tokens", "model_context_window_exceeded")
MAX_SCHEMA_PROBLEMS = 3


class LLM:
    """Claude through the Anthropic API (an API key) or Amazon Bedrock (IAM credentials)."""

    def __init__(
        self,
        *,
        default_model: str,
        api_key: str | None = None,
        provider: str = "anthropic",
        base_url: str | None = None,
        max_retries: int = MAX_RETRIES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ):
        self.provider = provider
        self.default_model = default_model
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self._api_key = api_key
        self._base_url = base_url

    def __repr__(self) -> str:  # never the key
        return f"LLM(provider={self.provider!r}, default_model={self.default_model!r})"

    @functools.cached_property
    def client(self) -> Any:
        return build_client(self.provider, self._api_key, self._base_url, self.max_retries, self.timeout_s)

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

        `deadline` is a `time.monotonic()` instant the call must end before (the
        Lambda's remaining time); raises ProviderError (502) on any failure.
        """
        model = model or self.default_model
        started = time.monotonic()
        message = None
        try:
            request = build_request(stage, system, content, reply_model, reasoning, model, max_tokens)
            message = self._send(stage, request, self._timeout_s(stage, deadline))
            reply = reply_from(message, reply_model, stage)
        except Exception as error:
            call.record(_inference(stage, model, reasoning, message, started, error=_short_error(error)))
            raise
        call.record(_inference(stage, model, reasoning, message, started))
        return reply

    def _send(self, stage: str, request: dict[str, Any], timeout_s: float) -> Message:
        import anthropic

        try:
            return self.client.messages.create(**request, timeout=timeout_s)
        except anthropic.AnthropicError as error:
            # Not chained: the SDK's error quotes the provider's reply, which may quote the prompt.
            raise provider_error(error, stage) from None

    def _timeout_s(self, stage: str, deadline: float | None) -> float:
        if deadline is None:
            return self.timeout_s
        left = deadline - time.monotonic() - DEADLINE_MARGIN_S
        if left < MIN_TIMEOUT_S:
            raise ProviderError(f"LLM call of stage {stage} not made: no time left before the deadline")
        return min(self.timeout_s, left)


def build_client(
    provider: str, api_key: str | None, base_url: str | None, max_retries: int, timeout_s: float
) -> Any:
    import anthropic

    try:
        if provider == "bedrock":
            # IAM credentials and the region come from the Lambda's environment.
            return anthropic.AnthropicBedrock(max_retries=max_retries, timeout=timeout_s)
        return anthropic.Anthropic(
            api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s
        )
    except (ValueError, anthropic.AnthropicError) as error:  # e.g. Bedrock without a region
        raise NotConfigured(f"LLM not configured: {error}") from None


def build_request(
    stage: str,
    system: str,
    content: str | list[dict],
    reply_model: type[pydantic.BaseModel],
    reasoning: str,
    model: str,
    max_tokens: int,
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": content}],
        "extra_headers": {STAGE_HEADER: stage},
        **thinking_params(reasoning, max_tokens),
    }
    if supports_structured_output(model):
        request["output_config"] = {"format": json_schema_format(reply_model)}
    return request


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


def reply_from(message: Message, reply_model: type[Reply], stage: str) -> Reply:
    """The validated reply, or a ProviderError saying why there is none."""
    from pydantic import ValidationError

    if message.stop_reason in TRUNCATED_STOP_REASONS:
        raise ProviderError(f"LLM reply of stage {stage} was truncated ({message.stop_reason})")
    if message.stop_reason == "refusal":
        raise ProviderError(f"LLM refused to answer stage {stage}{_refusal_category(message)}")
    text = "".join(block.text for block in message.content if block.type == "text")
    if not text.strip():
        raise ProviderError(f"LLM reply of stage {stage} was empty")
    try:
        data = extract_json_object(text)
    except NoJsonObject:
        raise ProviderError(f"LLM reply of stage {stage} was not JSON") from None
    try:
        return reply_model.model_validate(data)
    except ValidationError as error:
        problems = _schema_problems(error)
        raise ProviderError(f"LLM reply of stage {stage} did not fit its schema: {problems}") from None


def provider_error(error: Exception, stage: str) -> ProviderError:
    """A 502 naming what failed; never the key or the prompt (the provider's own message may quote either)."""
    import anthropic

    if isinstance(error, anthropic.APITimeoutError):
        return ProviderError(f"LLM call of stage {stage} timed out")
    if isinstance(error, anthropic.APIConnectionError):
        return ProviderError(f"LLM call of stage {stage} failed: could not reach the provider")
    if isinstance(error, anthropic.APIStatusError):
        return ProviderError(f"LLM call of stage {stage} failed: {_status_summary(error)}")
    return ProviderError(f"LLM call of stage {stage} failed: {type(error).__name__}")


def _status_summary(error: Any) -> str:
    kind = f" {error.type}" if isinstance(error.type, str) else ""
    request = f" (request {error.request_id})" if error.request_id else ""
    return f"HTTP {error.status_code}{kind}{request}"


def _refusal_category(message: Message) -> str:
    category = getattr(message.stop_details, "category", None)
    return f" ({category})" if category else ""


def _schema_problems(error: pydantic.ValidationError) -> str:
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'reply'}: {problem['msg']}"
        for problem in error.errors(include_input=False, include_url=False)
    ]
    more = len(problems) - MAX_SCHEMA_PROBLEMS
    return "; ".join(problems[:MAX_SCHEMA_PROBLEMS]) + (f" (and {more} more)" if more > 0 else "")


def _short_error(error: Exception) -> str:
    return error.message if isinstance(error, GbError) else f"unexpected {type(error).__name__}"


def _inference(
    stage: str, model: str, reasoning: str, message: Message | None, started: float, error: str | None = None
) -> Inference:
    usage = message.usage if message is not None else None
    input_tokens = _input_tokens(usage)
    output_tokens = usage.output_tokens if usage is not None else None
    return Inference(
        stage=stage,
        model=model,
        reasoning=reasoning,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        thinking_tokens=_thinking_tokens(usage),
        cost_usd=cost_usd(model, input_tokens, output_tokens) if usage is not None else None,
        duration_ms=round((time.monotonic() - started) * 1000),
        ok=error is None,
        error=error,
    )


def _input_tokens(usage: Usage | None) -> int | None:
    if usage is None:
        return None
    cached = (usage.cache_read_input_tokens or 0) + (usage.cache_creation_input_tokens or 0)
    return usage.input_tokens + cached


def _thinking_tokens(usage: Usage | None) -> int | None:
    details = getattr(usage, "output_tokens_details", None)
    return getattr(details, "thinking_tokens", None)
