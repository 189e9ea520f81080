"""Inferences: one `gb_inferences` row per model call, failed calls included.

A `CallContext` collects the calls of one request; the memory layer saves them
in one batched insert, inside the request's transaction when it succeeds and
in a transaction of their own when it fails (so failed calls are still recorded).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Protocol

import psycopg


class CallCancelled(Exception):
    """What the calls were made for is gone (its user erased, its job cancelled): no model call is
    made for it any more, and nothing of it is written."""


class CallGuard(Protocol):
    """Whether the calls of a queued job are still wanted (memory/job_guard.py)."""

    @property
    def artifact_ids(self) -> Sequence[int]:
        """The job's artifacts: its calls' inferences are written only while one of them is there."""

    def held(self) -> AbstractContextManager[None]:
        """Around each attempt of a model call: raises CallCancelled when the job is gone, else holds
        it until the attempt ends, so that an erasure waits for the attempt and none begins after."""


@dataclass(frozen=True)
class Inference:
    stage: str
    model: str
    reasoning: str | None
    input_tokens: int | None
    output_tokens: int | None
    thinking_tokens: int | None
    cost_usd: float | None
    duration_ms: int
    ok: bool
    error: str | None = None
    cached_tokens: int | None = None  # of input_tokens, read from the provider's prompt cache
    cache_write_tokens: int | None = None  # of input_tokens, written to the provider's prompt cache
    web_searches: int | None = None  # the server-side web searches the call ran (billed per search)


@dataclass
class CallContext:
    """Who the model calls of one request are made for, and what they cost."""

    user_id: str
    type: str  # 'remember' or 'query'
    session_id: str | None = None
    request_id: str | None = None
    dataset_id: int | None = None
    eval: bool = False
    inferences: list[Inference] = field(default_factory=list)
    saved: int = 0  # how many of `inferences` are already in the database
    guard: CallGuard | None = None  # a queued job's: the calls stop, and nothing is saved, once it is gone

    def record(self, inference: Inference) -> None:
        self.inferences.append(inference)

    def model_call(self) -> AbstractContextManager[None]:
        """What each attempt of a model call runs inside (the ai clients): the guard's hold, which
        raises CallCancelled when the calls are no longer wanted."""
        return nullcontext() if self.guard is None else self.guard.held()

    @property
    def input_tokens(self) -> int:
        return sum(i.input_tokens or 0 for i in self.inferences)

    @property
    def output_tokens(self) -> int:
        return sum(i.output_tokens or 0 for i in self.inferences)

    @property
    def cost_usd(self) -> float | None:
        return total_cost_usd(self.inferences)


def is_unpriced(inference: Inference) -> bool:
    """A call that reported its usage but has no cost: a model no price table knows. (A failed
    attempt that got no reply reported no usage either: it has no cost and adds none.)"""
    return inference.cost_usd is None and inference.input_tokens is not None


def total_cost_usd(inferences: Iterable[Inference]) -> float | None:
    """What the calls cost in all; None when one of them is unpriced, for a sum that left it out
    would be a guess (docs/cost.md: a model no table knows costs null, never 0)."""
    inferences = list(inferences)
    if any(is_unpriced(i) for i in inferences):
        return None
    return round(sum(i.cost_usd or 0.0 for i in inferences), 8)


def save_inferences(conn: psycopg.Connection, call: CallContext) -> None:
    """Write the call's inferences not yet saved, in one statement.

    The dataset is looked up rather than trusted: after a failed remember, the dataset
    it created was rolled back with everything else, and its inferences keep no dataset. A queued
    job's are written only while its text is still there, its dataset held until the transaction
    ends: an erasure (which locks the user's datasets first) erases them, or came first and nothing
    is written. The statement is only sent: in pipeline mode it travels with the next read.
    """
    rows = call.inferences[call.saved :]
    if not rows:
        return
    conn.execute(
        """
        WITH wanted AS (  -- a queued job's: its dataset held against an erasure, while its text is there
            SELECT 1 FROM gb_artifacts a JOIN gb_datasets d ON d.id = a.dataset_id
            WHERE a.id = ANY(%(job_artifacts)s::bigint[]) FOR KEY SHARE OF d
        )
        INSERT INTO gb_inferences (user_id, dataset_id, type, stage, model, reasoning, input_tokens,
                                   output_tokens, thinking_tokens, cache_write_tokens, cache_read_tokens,
                                   cost_usd, duration_ms, session_id, request_id, ok, error, web_searches)
        SELECT %(user_id)s, (SELECT id FROM gb_datasets WHERE id = %(dataset_id)s), %(type)s, stage, model, reasoning, input_tokens, output_tokens,
               thinking_tokens, cache_write_tokens, cache_read_tokens, cost_usd, duration_ms, %(session_id)s,
               %(request_id)s, ok, error, web_searches
        FROM unnest(%(stage)s::text[], %(model)s::text[], %(reasoning)s::text[], %(input_tokens)s::int[],
                    %(output_tokens)s::int[], %(thinking_tokens)s::int[], %(cache_write_tokens)s::int[],
                    %(cache_read_tokens)s::int[], %(cost_usd)s::numeric[], %(duration_ms)s::int[],
                    %(ok)s::bool[], %(error)s::text[], %(web_searches)s::int[])
             AS i(stage, model, reasoning, input_tokens, output_tokens, thinking_tokens, cache_write_tokens,
                  cache_read_tokens, cost_usd, duration_ms, ok, error, web_searches)
        WHERE %(job_artifacts)s::bigint[] IS NULL OR EXISTS (SELECT 1 FROM wanted)
        """,
        {
            "job_artifacts": None if call.guard is None else list(call.guard.artifact_ids),
            "user_id": call.user_id,
            "dataset_id": call.dataset_id,
            "type": call.type,
            "session_id": call.session_id,
            "request_id": call.request_id,
            "stage": [i.stage for i in rows],
            "model": [i.model for i in rows],
            "reasoning": [i.reasoning for i in rows],
            "input_tokens": [i.input_tokens for i in rows],
            "output_tokens": [i.output_tokens for i in rows],
            "thinking_tokens": [i.thinking_tokens for i in rows],
            "cache_write_tokens": [i.cache_write_tokens for i in rows],
            "cache_read_tokens": [i.cached_tokens for i in rows],
            "cost_usd": [i.cost_usd for i in rows],
            "duration_ms": [i.duration_ms for i in rows],
            "ok": [i.ok for i in rows],
            "error": [i.error for i in rows],
            "web_searches": [i.web_searches for i in rows],
        },
    )
    call.saved = len(call.inferences)


@contextmanager
def unsaved_on_failure(call: CallContext) -> Iterator[None]:
    """Around a transaction that saves the call's inferences: when it fails, they count as not
    saved again (in pipeline mode their INSERT was only queued, and rolled back with the rest), so
    that the operation records them in a transaction of its own."""
    saved = call.saved
    try:
        yield
    except BaseException:
        call.saved = saved
        raise
