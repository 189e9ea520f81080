"""The offline LLM (GB_LLM_PROVIDER=offline): each stage answered by rules from its own prompt.

It speaks the same port as the provider clients (memory/ports.py, LLM): it reads the prompt's
sections (<text>, <stored_facts>, <new_facts>, <graph>, <question>) and returns the stage's reply
model, so the memory core runs unchanged. Every call is recorded as an inference of the model
`offline`, with no tokens and no cost. A stage it has no rule for (an image, an eval's judge) is a
503 that says which key to set.
"""

from __future__ import annotations

import time
from typing import TypeVar

from pydantic import BaseModel

from gligabao.ai.offline.answers import answer_offline
from gligabao.ai.offline.records import offline_inference
from gligabao.ai.offline.resolution import resolve_offline
from gligabao.ai.offline.sections import section
from gligabao.ai.offline.sentences import extract_sentences
from gligabao.ai.prompts.detect_geo import DetectedPlaces
from gligabao.ai.prompts.extract import ChunkExtraction, Extraction
from gligabao.ai.prompts.query import QueryReply
from gligabao.ai.prompts.resolve import Resolution, WindowResolution
from gligabao.errors import NotConfigured
from gligabao.observability.inferences import CallContext
from gligabao.timefmt import parse_rfc3339

Reply = TypeVar("Reply", bound=BaseModel)

OFFLINE_MODEL = "offline"
SUMMARY_CHARACTERS = 300


class OfflineLLM:
    """The rule-based stages, in process: no network, no key."""

    provider = "offline"
    default_model = OFFLINE_MODEL

    def __repr__(self) -> str:
        return "OfflineLLM()"

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
        """The stage's reply, by rules; recorded on `call` like a provider's (a cancelled job's
        call is not made: the guard raises before it)."""
        started = time.monotonic()
        with call.model_call():
            try:
                reply = offline_reply(stage, content, reply_model)
            except NotConfigured as error:
                call.record(offline_inference(stage, OFFLINE_MODEL, reasoning, started, error=error.message))
                raise
        call.record(offline_inference(stage, OFFLINE_MODEL, reasoning, started))
        return reply


def offline_reply(stage: str, content: str | list[dict], reply_model: type[Reply]) -> Reply:
    if not isinstance(content, str):
        raise NotConfigured(
            "images need a vision model: the offline LLM reads text only (set ANTHROPIC_API_KEY)"
        )
    if reply_model in (Extraction, ChunkExtraction):
        return reply_model.model_validate(_extraction(content, chunk=reply_model is ChunkExtraction))
    if reply_model in (Resolution, WindowResolution):
        return resolve_offline(content, window=reply_model is WindowResolution)
    if reply_model is QueryReply:
        return answer_offline(content)
    if reply_model is DetectedPlaces:
        return reply_model(places=[])
    raise NotConfigured(f"the offline LLM has no rule for the {stage} stage (set ANTHROPIC_API_KEY)")


def _extraction(content: str, *, chunk: bool) -> dict:
    # The text is the content's last section, and may itself hold "</text>": cut at the last one.
    text = content.partition("<text>\n")[2].rpartition("\n</text>")[0]
    reference = parse_rfc3339(section(content, "reference_time").strip())
    extraction = extract_sentences(text, reference).model_dump()
    if chunk:
        extraction["summary"] = _summary(text)
    return extraction


def _summary(text: str) -> str:
    """A chunk's summary: its opening, cut at a word."""
    flat = " ".join(text.split())
    if len(flat) <= SUMMARY_CHARACTERS:
        return flat
    return flat[:SUMMARY_CHARACTERS].rsplit(" ", 1)[0] + "..."
