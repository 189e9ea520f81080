"""The cost of a request's monitoring event ("the first hour"): a model no price table knows costs
null (docs/cost.md), never 0, and a request that made a call of it has no known cost either: its
log line leaves `cost_usd` out (Powertools drops null fields) and its EMF document sends no
CostUSD. A failed attempt that got no reply reported no usage and adds nothing."""

from __future__ import annotations

import json

import pytest

from gligabao.observability.inferences import CallContext, Inference
from gligabao.observability.monitoring import emit_event


@pytest.fixture(autouse=True)
def _metrics_on(monkeypatch):
    # EMF output is switched off in Powertools dev mode or with POWERTOOLS_METRICS_DISABLED.
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)


def inference(
    model: str, cost_usd: float | None, *, input_tokens: int | None = 100, ok: bool = True
) -> Inference:
    return Inference(
        stage="extract",
        model=model,
        reasoning=None,
        input_tokens=input_tokens,
        output_tokens=20 if input_tokens is not None else None,
        thinking_tokens=None,
        cost_usd=cost_usd,
        duration_ms=5,
        ok=ok,
    )


def call_of(*inferences: Inference) -> CallContext:
    call = CallContext(user_id="alice", type="remember", request_id="req-1")
    for one in inferences:
        call.record(one)
    return call


def emitted(capsys, call: CallContext) -> tuple[dict, dict]:
    """(the log line, the EMF document) of one remember.ok event of `call`."""
    capsys.readouterr()
    emit_event(
        "remember.ok",
        request_id="req-1",
        user_id="alice",
        dataset="main",
        session_id=None,
        duration_ms=10,
        status=200,
        call=call,
    )
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    (line,) = [d for d in docs if "_aws" not in d]
    (emf,) = [d for d in docs if "_aws" in d]
    return line, emf


def metric_names(emf: dict) -> set[str]:
    return {m["Name"] for m in emf["_aws"]["CloudWatchMetrics"][0]["Metrics"]}


@pytest.mark.parametrize(
    "priced", [[], [inference("claude-haiku-5-5", 0.00002)]], ids=["only-unpriced", "mixed"]
)
def test_a_request_with_an_unpriced_call_has_no_cost_in_its_event_never_zero(capsys, priced):
    call = call_of(*priced, inference("llama3.1:8b", None), inference("llama3.1:8b", None))

    line, emf = emitted(capsys, call)

    assert call.cost_usd is None
    assert "cost_usd" not in line  # null: Powertools leaves None fields out
    calls = len(priced) + 2
    assert line["input_tokens"] == 100 * calls  # the tokens are known all the same
    assert "CostUSD" not in metric_names(emf) and "CostUSD" not in emf
    assert emf["InputTokens"] == [100.0 * calls] and emf["ModelCalls"] == [float(calls)]


def test_a_request_of_priced_calls_logs_their_sum(capsys):
    line, emf = emitted(capsys, call_of(inference("claude-haiku-5-5", 0.00002), inference("x", 0.0000016)))

    assert line["cost_usd"] == pytest.approx(0.0000216)
    assert emf["CostUSD"] == [pytest.approx(0.0000216)]


def test_a_failed_attempt_without_a_reply_adds_nothing_and_leaves_the_cost_known(capsys):
    failed = inference("claude-haiku-5-5", None, input_tokens=None, ok=False)

    line, emf = emitted(capsys, call_of(failed, inference("claude-haiku-5-5", 0.00002)))

    assert line["cost_usd"] == pytest.approx(0.00002)
    assert emf["CostUSD"] == [pytest.approx(0.00002)]


def test_a_request_of_no_model_call_costs_zero(capsys):
    line, emf = emitted(capsys, call_of())

    assert line["cost_usd"] == 0 and emf["CostUSD"] == [0.0]


def test_an_eval_trajectory_of_an_unpriced_call_has_no_total_cost():
    from gligabao.memory.trajectory import _final_metrics

    priced = Inference("extract", "claude-haiku-5-5", "none", 10, 5, None, 0.25, 3, True)
    unpriced = Inference("query", "mystery-model-1", "none", 10, 5, None, None, 3, True)

    assert _final_metrics([priced], 1, 3.0)["total_cost_usd"] == 0.25
    assert _final_metrics([priced, unpriced], 2, 6.0)["total_cost_usd"] is None
