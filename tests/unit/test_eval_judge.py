"""The judge: stage `judge`, its prompt beside its reply model, one call per answer, its cost its own."""

from __future__ import annotations

import pytest

from gligabao.ai.prompts.judge import JUDGE_STAGE, JUDGE_SYSTEM, Verdict, judge_prompt
from gligabao.errors import ProviderError
from gligabao.evals.judge import JudgeFailed, LlmJudge
from gligabao.observability.inferences import Inference


class ScriptedLLM:
    """The package's LLM port in-process: replies in order, records each call as the LLM does."""

    default_model = "claude-haiku-5-5"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    def complete(self, call, stage, *, system, content, reply_model, reasoning, model, max_tokens):
        self.calls.append({"stage": stage, "system": system, "content": content, "model": model})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        call.record(Inference(stage, model, reasoning, 120, 15, None, 0.000195, 5, True))
        return reply_model.model_validate(reply)


def test_the_prompt_gives_the_question_the_expected_answer_and_the_answer():
    system, content = judge_prompt(
        "Where does Alice work?", "Globex", "She works at Globex.", unanswerable=False
    )

    assert system == JUDGE_SYSTEM
    assert content == (
        "<question>\nWhere does Alice work?\n</question>\n"
        "<expected>\nGlobex\n</expected>\n"
        "<answer>\nShe works at Globex.\n</answer>"
    )


def test_an_unanswerable_question_tells_the_judge_a_decline_is_right():
    _, content = judge_prompt("What is Alice's dog called?", None, "I don't know.", unanswerable=True)

    assert "unanswerable: the memory holds no answer; a correct answer declines" in content
    assert "a correct answer declines" in content
    assert "Unanswerable questions" in JUDGE_SYSTEM and "declines" in JUDGE_SYSTEM


def test_the_reply_model_takes_a_null_reason():
    assert Verdict.model_validate({"correct": True, "reason": None}) == Verdict(correct=True, reason="")


def test_a_judgement_is_one_call_of_stage_judge_with_its_own_tokens_and_cost():
    llm = ScriptedLLM({"correct": True, "reason": "names Globex"})
    judgement = LlmJudge(llm, model="claude-sonnet-4-5")("Where?", "Globex", "Globex.", unanswerable=False)

    assert [(call["stage"], call["model"]) for call in llm.calls] == [(JUDGE_STAGE, "claude-sonnet-4-5")]
    assert (judgement.correct, judgement.reason) == (True, "names Globex")
    assert (judgement.prompt_tokens, judgement.completion_tokens, judgement.cost_usd) == (120, 15, 0.000195)


def test_a_failed_judge_call_is_a_judge_failure_naming_why():
    judge = LlmJudge(ScriptedLLM(ProviderError("LLM reply of stage judge was not JSON")))

    with pytest.raises(JudgeFailed, match="was not JSON"):
        judge("Where?", "Globex", "Globex.", unanswerable=False)
