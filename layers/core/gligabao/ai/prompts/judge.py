"""Stage `judge` (the `gligabao eval` command, not the service): is an answer right?

The judge sees the question, the expected answer and the memory's answer, and replies whether
they agree in substance (other words, more detail, another date format are fine). A question
the memory cannot answer (`unanswerable`) is right only when the answer declines: it says it
does not know, or that the memory holds nothing about it; any made-up answer is wrong.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, Field

JUDGE_STAGE = "judge"
JUDGE_MAX_TOKENS = 512

JUDGE_SYSTEM = """You grade the answers of a long-term memory system against the expected answers of a
test suite. You get a question, the expected answer and the system's answer.

Answerable questions (<expected> holds the right answer)
- correct: the answer states the expected answer in substance. Other words, a paraphrase, more
  detail, another format of the same date or number, or a relative date that resolves to it are
  correct. An answer that also gives a wrong or contradicting claim, hedges between options, or
  says it does not know is not correct.

Unanswerable questions (<expected> says the question cannot be answered from the memory)
- correct: the answer declines: it says it does not know, or that nothing about it was said or
  is in memory. Any answer that asserts an answer anyway is not correct.

Answer with only a JSON object, no prose around it:
{"correct": true, "reason": "The answer names Lyon, the expected city."}
- reason: one short sentence."""


def _reason(value: object) -> object:
    return "" if value is None else value


class Verdict(BaseModel):
    """{"correct": true, "reason": "..."}"""

    correct: bool
    reason: Annotated[str, BeforeValidator(_reason)] = Field(default="")


def judge_prompt(question: str, expected: str | None, answer: str, *, unanswerable: bool) -> tuple[str, str]:
    """(system, content) of the judge call."""
    if unanswerable:
        expected_text = "(unanswerable: the memory holds no answer; a correct answer declines)"
        if expected:
            expected_text += f"\nNote from the suite: {expected}"
    else:
        expected_text = expected or ""
    content = "\n".join(
        [
            f"<question>\n{question}\n</question>",
            f"<expected>\n{expected_text}\n</expected>",
            f"<answer>\n{answer}\n</answer>",
        ]
    )
    return JUDGE_SYSTEM, content
