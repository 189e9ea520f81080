"""The eval run: every remember of the suite, then every question, each sent with `"eval": true`,
each answer judged; every finished item kept in the run's state before the next one.

Remembers of one dataset are sent one after the other, in the suite's order (a later text may
supersede an earlier one); datasets run side by side, `concurrency` at a time. Questions are
asked once every remember is in, `concurrency` at a time. An item that fails (the API's 502, a
timeout, the judge's failure) is recorded as failed and counted so; the run goes on.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol

from gligabao.evals.api import CallFailed, MemoryApi
from gligabao.evals.judge import Judge, JudgeFailed
from gligabao.evals.scoring import string_scores
from gligabao.evals.state import RunState
from gligabao.evals.suite import QuestionItem, RememberItem, Suite

ERROR_TEXT_MAX_CHARS = 500


class Progress(Protocol):
    def update(self, n: int = 1) -> None: ...


def run_suite(
    suite: Suite,
    api: MemoryApi,
    judge: Judge,
    state: RunState,
    *,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> None:
    """Runs what `state` has not finished. Interrupted (Ctrl-C), it stops sending at once; what
    finished is kept and a rerun goes on from there."""
    tick = progress.update if progress is not None else (lambda n=1: None)
    stop = threading.Event()  # set when the run is interrupted: no new call starts
    remembers = {
        dataset: [item for item in items if not state.done(item.id)]
        for dataset, items in suite.remembers_by_dataset().items()
    }
    _in_pool(
        concurrency,
        stop,
        (
            (lambda items=items: _remember_all(items, api, state, tick, stop))
            for items in remembers.values()
            if items
        ),
    )
    questions = [item for item in suite.questions if not state.done(item.id)]
    _in_pool(
        concurrency, stop, ((lambda item=item: _ask(item, api, judge, state, tick)) for item in questions)
    )


def _in_pool(concurrency: int, stop: threading.Event, tasks: Iterable[Callable[[], None]]) -> None:
    """Runs the tasks; on an interrupt (or a bug of the runner) the calls under way end and are
    recorded, and no other starts."""

    def guarded(task: Callable[[], None]) -> None:
        if stop.is_set():
            return
        try:
            task()
        except BaseException:
            stop.set()
            raise

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="gligabao-eval")
    futures: list[Future] = []
    try:
        futures = [pool.submit(guarded, task) for task in tasks]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in done:
            future.result()  # a bug of the runner (never an item's failure) surfaces here
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _remember_all(
    items: list[RememberItem], api: MemoryApi, state: RunState, tick, stop: threading.Event
) -> None:
    for item in items:
        if stop.is_set():
            return
        _remember(item, api, state)
        tick(1)


def _remember(item: RememberItem, api: MemoryApi, state: RunState) -> None:
    body = {**state.identify(item.body()), "eval": True}
    # A rerun after a crash between the call and its record replays the stored answer.
    run_tag = state.user_id or state.run.get("dataset_prefix")
    key = hashlib.sha256(f"{run_tag}\n{item.id}".encode()).hexdigest()
    started = time.monotonic()
    result: dict[str, Any] = {"id": item.id, "type": "remember", "dataset": item.dataset}
    try:
        response = api.remember(body, idempotency_key=key)
    except CallFailed as error:
        state.record({**result, **_failure(error, started)}, None)
        return
    trajectory = response.get("trajectory") if isinstance(response, dict) else None
    state.record(
        {
            **result,
            "ok": True,
            "answered": True,
            "latency_ms": _elapsed_ms(started),
            **_metrics_of(trajectory),
        },
        trajectory,
    )


def _ask(item: QuestionItem, api: MemoryApi, judge: Judge, state: RunState, tick) -> None:
    try:
        _ask_and_judge(item, api, judge, state)
    finally:
        tick(1)


def _ask_and_judge(item: QuestionItem, api: MemoryApi, judge: Judge, state: RunState) -> None:
    result: dict[str, Any] = {
        "id": item.id,
        "type": "question",
        "dataset": item.dataset,
        "category": item.category,
        "unanswerable": item.unanswerable,
        "question": item.question,
        "expected": item.answer,
    }
    started = time.monotonic()
    try:
        response = api.query({**state.identify(item.body()), "eval": True})
    except CallFailed as error:
        state.record({**result, **_failure(error, started), "correct": False}, None)
        return
    latency_ms = _elapsed_ms(started)
    answer = response.get("answer") if isinstance(response, dict) else None
    trajectory = response.get("trajectory") if isinstance(response, dict) else None
    if not isinstance(answer, str):
        failure = {"ok": False, "status": 200, "error": "the query's response has no answer"}
        state.record({**result, **failure, "correct": False, "latency_ms": latency_ms}, trajectory)
        return
    scores = string_scores(answer, item.answer, unanswerable=item.unanswerable)
    result |= {
        "answer": answer,
        "answered": True,
        "latency_ms": latency_ms,
        "exact": scores.exact,
        "contains": scores.contains,
        **_metrics_of(trajectory),
    }
    try:
        judgement = judge(item.question, item.answer, answer, unanswerable=item.unanswerable)
    except JudgeFailed as error:
        # Answered but not judged: counted as failed (a rerun with --retry-failed judges it).
        state.record({**result, "ok": False, "error": f"judge: {error}", "correct": False}, trajectory)
        return
    result |= {
        "ok": True,
        "correct": judgement.correct,
        "judge": {
            "reason": judgement.reason,
            "model": judgement.model,
            "prompt_tokens": judgement.prompt_tokens,
            "completion_tokens": judgement.completion_tokens,
            "cost_usd": judgement.cost_usd,
        },
    }
    state.record(result, trajectory)


def _failure(error: CallFailed, started: float) -> dict[str, Any]:
    return {
        "ok": False,
        "answered": False,
        "status": error.status,
        "error": error.text[:ERROR_TEXT_MAX_CHARS],
        "latency_ms": _elapsed_ms(started),
    }


def _metrics_of(trajectory: Any) -> dict[str, Any]:
    """The service's tokens and cost of a call, from its trajectory's final metrics."""
    metrics = trajectory.get("final_metrics") if isinstance(trajectory, dict) else None
    if not isinstance(metrics, dict):
        return {"trajectory_id": None, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    return {
        "trajectory_id": trajectory.get("trajectory_id"),
        "prompt_tokens": metrics.get("total_prompt_tokens") or 0,
        "completion_tokens": metrics.get("total_completion_tokens") or 0,
        "cost_usd": metrics.get("total_cost_usd") or 0.0,
    }


def _elapsed_ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
