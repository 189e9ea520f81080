"""The judge: one call of stage `judge` per answer, through the package's own LLM client with the
caller's provider key (the settings of the environment: ANTHROPIC_API_KEY, GB_LLM_PROVIDER, ...).

Its tokens and cost are the judge's own, reported apart from the service's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gligabao.ai.prompts.judge import JUDGE_MAX_TOKENS, JUDGE_STAGE, Verdict, judge_prompt
from gligabao.errors import GbError
from gligabao.observability.inferences import CallContext


class JudgeFailed(Exception):
    """The judge could not give a verdict (its provider failed, or its reply was unusable)."""


@dataclass(frozen=True)
class Judgement:
    correct: bool
    reason: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class Judge(Protocol):
    def __call__(self, question: str, expected: str | None, answer: str, *, unanswerable: bool) -> Judgement:
        """The verdict on one answer; raises JudgeFailed."""
        ...


class LlmJudge:
    """A judge of the package's LLM client (gligabao.ai.llm.LLM)."""

    def __init__(self, llm, *, model: str | None = None, reasoning: str = "none"):
        self.llm = llm
        self.model = model or llm.default_model
        self.reasoning = reasoning

    def __call__(self, question: str, expected: str | None, answer: str, *, unanswerable: bool) -> Judgement:
        system, content = judge_prompt(question, expected, answer, unanswerable=unanswerable)
        call = CallContext(user_id="gligabao-eval", type="judge", eval=True)
        try:
            verdict = self.llm.complete(
                call,
                JUDGE_STAGE,
                system=system,
                content=content,
                reply_model=Verdict,
                reasoning=self.reasoning,
                model=self.model,
                max_tokens=JUDGE_MAX_TOKENS,
            )
        except GbError as error:
            raise JudgeFailed(error.message) from None
        return Judgement(
            correct=verdict.correct,
            reason=verdict.reason,
            model=self.model,
            prompt_tokens=call.input_tokens,
            completion_tokens=call.output_tokens,
            cost_usd=call.cost_usd,
        )


def llm_judge_from_settings(settings, *, model: str | None = None) -> LlmJudge:
    """The judge of the environment's provider settings; NotConfigured (a GbError) without a key."""
    from gligabao.ai.llm import LLM
    from gligabao.errors import NotConfigured

    key = settings.anthropic_api_key
    if settings.llm_provider == "anthropic" and key is None:
        raise NotConfigured("the judge needs ANTHROPIC_API_KEY (or GB_LLM_PROVIDER=bedrock)")
    llm = LLM(
        default_model=settings.llm_model,
        api_key=key.get_secret_value() if key is not None else None,
        provider=settings.llm_provider,
        base_url=settings.anthropic_base_url,
    )
    return LlmJudge(llm, model=model)
