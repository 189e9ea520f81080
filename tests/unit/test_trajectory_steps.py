"""The ATIF trajectory of an eval call, built from its stages and its model calls (memory/trajectory.py):
valid ATIF v1.8, steps in order, each model call after the stage that made it, the totals the sum of
the steps; and a call without eval gets the no-op recorder."""

from __future__ import annotations

import time

import atif
import pytest

from gligabao.memory import trajectory as trajectory_module
from gligabao.memory.question import Question
from gligabao.memory.remember import TextToRemember
from gligabao.memory.trajectory import NO_TRAJECTORY, TrajectoryRecorder, recorder_for
from gligabao.observability.inferences import CallContext, Inference


def inference(
    stage: str, *, model: str = "claude-haiku-5-5", reasoning: str | None = "none", **fields
) -> Inference:
    values = {
        "input_tokens": 100,
        "output_tokens": 20,
        "thinking_tokens": None,
        "cost_usd": 0.001,
        "duration_ms": 12,
        "ok": True,
    }
    return Inference(stage=stage, model=model, reasoning=reasoning, **{**values, **fields})


def embed_call(**fields) -> Inference:
    return inference("embed", model="text-embedding-3-small", reasoning=None, output_tokens=0, **fields)


def remember_recorder(call: CallContext) -> TrajectoryRecorder:
    recorder = recorder_for(
        "remember", call, TextToRemember("u1", "main", "Alice works at Acme.", eval=True), "x"
    )
    assert isinstance(recorder, TrajectoryRecorder)
    return recorder


def test_a_call_without_eval_gets_the_no_op_recorder_and_stays_no_eval_call():
    call = CallContext(user_id="u1", type="query")

    recorder = recorder_for("query", call, Question(user_id="u1", query="Where?"), "Where?")

    assert recorder is NO_TRAJECTORY
    assert call.eval is False
    assert recorder.save_query(None, 1, "answer", None) is None
    remembered = object()
    assert recorder.save_remember(None, 1, remembered) is remembered


def test_an_eval_call_is_marked_on_its_call_context():
    call = CallContext(user_id="u1", type="query")

    recorder_for("query", call, Question(user_id="u1", query="Where?", eval=True), "Where?")

    assert call.eval is True


def test_model_calls_follow_the_stage_that_made_them_and_the_answer_is_the_last_step():
    call = CallContext(user_id="u1", type="remember", session_id="a")
    recorder = remember_recorder(call)
    recorder.stage("chunking")
    call.record(inference("extract", reasoning="low", cached_tokens=40))
    recorder.stage("extraction", calls=("extract",))
    call.record(embed_call())
    recorder.stage("embedding", calls=("embed",))
    recorder.stage("resolution", calls=("resolve",))

    trajectory = recorder.build(final="Stored artifact 1.")

    atif.Trajectory.model_validate(trajectory)
    assert [(s["source"], s.get("extra", {}).get("stage")) for s in trajectory["steps"]] == [
        ("user", None),
        ("system", "chunking"),
        ("system", "extraction"),
        ("agent", "extract"),
        ("system", "embedding"),
        ("agent", "embed"),
        ("system", "resolution"),
        ("agent", "stored"),
    ]
    assert [s["step_id"] for s in trajectory["steps"]] == list(range(1, 9))
    extract = trajectory["steps"][3]
    assert (extract["model_name"], extract["reasoning_effort"]) == ("claude-haiku-5-5", "low")
    assert extract["metrics"] == {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "cached_tokens": 40,
        "cost_usd": 0.001,
    }
    assert "reasoning_effort" not in trajectory["steps"][5]  # an embeddings call has no reasoning level
    assert trajectory["steps"][-1] == {
        "step_id": 8,
        "source": "agent",
        "message": "Stored artifact 1.",
        "llm_call_count": 0,
        "extra": {"stage": "stored"},
    }
    assert trajectory["session_id"] == "a"


def test_the_final_metrics_are_the_sums_of_the_model_calls():
    call = CallContext(user_id="u1", type="query")
    recorder = recorder_for("query", call, Question(user_id="u1", query="Where?", eval=True), "Where?")
    call.record(embed_call(input_tokens=7, cost_usd=0.0000002))
    call.record(inference("query", input_tokens=300, output_tokens=40, thinking_tokens=25, cost_usd=0.002))
    recorder.stage("search_vectors", calls=("embed",))

    trajectory = recorder.build(final="Alice works at Acme.", final_stage="query")

    totals = trajectory["final_metrics"]
    assert (totals["total_prompt_tokens"], totals["total_completion_tokens"]) == (307, 40)
    assert totals["total_cost_usd"] == pytest.approx(0.0020002)
    assert totals["total_steps"] == len(trajectory["steps"]) == 4
    assert (totals["extra"]["llm_calls"], totals["extra"]["embedding_calls"]) == (1, 1)
    assert totals["extra"]["thinking_tokens"] == 25
    last = trajectory["steps"][-1]
    assert (last["message"], last["extra"]["stage"], last["llm_call_count"]) == (
        "Alice works at Acme.",
        "query",
        1,
    )


def test_a_failed_model_call_is_an_agent_step_whose_message_is_its_error():
    call = CallContext(user_id="u1", type="remember")
    recorder = remember_recorder(call)
    call.record(
        inference("extract", ok=False, error="LLM reply was truncated", input_tokens=None, cost_usd=None)
    )
    recorder.stage("extraction", calls=("extract",))

    trajectory = recorder.build(final="")

    atif.Trajectory.model_validate(trajectory)
    failed = trajectory["steps"][2]
    assert (failed["message"], failed["extra"]["ok"]) == ("LLM reply was truncated", False)
    assert trajectory["final_metrics"]["extra"]["failed_calls"] == 1


class Ticks:
    """memory/trajectory.py's `time`: each perf_counter() reading 0.25 s after the one before."""

    def __init__(self):
        self.now = time.perf_counter()

    def perf_counter(self) -> float:
        self.now += 0.25
        return self.now


def test_a_stage_that_cannot_be_timed_apart_has_a_null_duration_and_others_their_own(monkeypatch):
    call = CallContext(user_id="u1", type="query")
    recorder = recorder_for("query", call, Question(user_id="u1", query="Where?", eval=True), "Where?")
    monkeypatch.setattr(trajectory_module, "time", Ticks())
    recorder.stage("keyword_seeds", duration_ms=1.5)
    recorder.stage("expand", duration_ms=None, note="computed in the search_vectors statement")
    recorder.stage("measured")

    steps = recorder.build(final="")["steps"]

    assert [s["extra"]["duration_ms"] for s in steps[1:4]][:2] == [1.5, None]
    assert steps[3]["extra"]["duration_ms"] == 250.0  # measured: the time since the stage before it
    assert all(s["timestamp"].endswith("Z") for s in steps[:4])


def test_the_request_is_the_input_without_what_the_server_added():
    call = CallContext(user_id="u1", type="query", request_id="req-1")
    question = Question(
        user_id="u1", query="Where?", reasoning={"query": "low"}, request_id="req-1", deadline=5.0, eval=True
    )

    trajectory = recorder_for("query", call, question, question.query).build(final="")

    assert trajectory["extra"]["input"] == {
        "user_id": "u1",
        "query": "Where?",
        "dataset": "main",
        "session_id": None,
        "reasoning": {"query": "low"},
        "models": {},
        "as_of": None,
        "nearby_radius_km": None,
        "eval": True,
        "answer": True,
        "filters": None,
    }
    assert trajectory["extra"]["request_id"] == "req-1"
