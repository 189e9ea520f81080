"""Each job of an asynchronous remember ends with one monitoring event (SPEC section 11), as each
request does: `remember_job.ok` or `remember_job.error`, with the tokens and cost of every model
call the job made, so that the metrics count the work of asynchronous and batch remembers too."""

from __future__ import annotations

import json

import pytest
from fakes.anthropic_server import Reply
from job_helpers import pump, pump_refused
from remember_helpers import call_handler, remember_handler

ALICE = {"user_id": "u1", "dataset": "main", "text": "Alice works at Acme.", "session_id": "s1"}


@pytest.fixture(autouse=True)
def _metrics_on(monkeypatch):
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)


def _job_events(capsys) -> list[tuple[dict, dict]]:
    """The jobs' events since the last call: (log line, EMF document) each, in order."""
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    logs = [d for d in docs if str(d.get("event", "")).startswith("remember_job.")]
    emf = [d for d in docs if "_aws" in d and d.get("Operation") == "remember_job"]
    assert len(logs) == len(emf)
    return list(zip(logs, emf, strict=True))


def _metric(doc: dict, name: str) -> float:
    value = doc[name]
    return value[0] if isinstance(value, list) else value


def _accepted(body: dict, path: str = "/v1/gb/remember") -> dict:
    reply = call_handler(remember_handler(), body, path=path)
    assert reply.status == 202, reply.json
    return reply.json


def _with_limits(**update) -> None:
    from conftest import reconfigure

    from gligabao import bootstrap

    reconfigure(limits=bootstrap.bundle().limits.model_copy(update=update))


def test_a_done_job_ends_with_one_ok_event_with_its_counts_calls_tokens_and_cost(
    db, models, sqs_jobs, capsys
):
    _accepted({**ALICE, "async": True})
    capsys.readouterr()

    pump(sqs_jobs)

    [(log, emf)] = _job_events(capsys)
    assert (log["event"], log["status"], log["user_id"], log["dataset"], log["session_id"]) == (
        "remember_job.ok",
        200,
        "u1",
        "main",
        "s1",
    )
    assert log["counts"] == {"entities_created": 2, "edges_created": 1, "edges_superseded": 0}
    recorded = db.execute("SELECT count(*), sum(input_tokens), sum(cost_usd) FROM gb_inferences").fetchone()
    assert _metric(emf, "ModelCalls") == recorded[0] == 2  # extract and embed
    assert log["input_tokens"] == recorded[1] > 0
    assert log["cost_usd"] == pytest.approx(float(recorded[2])) and log["cost_usd"] > 0
    assert (_metric(emf, "Errors"), _metric(emf, "ServerErrors"), _metric(emf, "EntitiesCreated")) == (
        0,
        0,
        2,
    )


def test_the_jobs_events_count_every_call_once_those_made_ahead_included(db, models, sqs_jobs, capsys):
    _with_limits(bulk_window_texts=1)  # one text at a time, the texts behind extracted ahead
    texts = [
        {"text": f"Alice lives in {city}.", "reference_time": f"{2010 + i}-01-01T00:00:00Z"}
        for i, city in enumerate(["Paris", "Rome", "Oslo", "Lima"])
    ]
    _accepted({"user_id": "u1", "dataset": "main", "texts": texts}, "/v1/gb/remember/batch")
    capsys.readouterr()

    pump(sqs_jobs, rounds=1)

    [(_, first)] = _job_events(capsys)
    assert _metric(first, "ModelCalls") == 2 + 3 * 2  # its extract and embed, and the three texts' behind it

    pump(sqs_jobs)

    events = [first, *(emf for _, emf in _job_events(capsys))]
    calls, tokens = db.execute("SELECT count(*), sum(input_tokens) FROM gb_inferences").fetchone()
    assert sum(_metric(e, "ModelCalls") for e in events) == calls
    assert sum(_metric(e, "InputTokens") for e in events) == tokens


def test_a_failed_attempt_ends_with_an_error_event_with_the_providers_status(db, models, sqs_jobs, capsys):
    fake_anthropic, _ = models
    _with_limits(provider_max_attempts=1)
    _accepted({**ALICE, "async": True})
    fake_anthropic.queue(Reply.error(500))
    capsys.readouterr()

    pump(sqs_jobs)

    [(failed, failed_emf), (done, _)] = _job_events(capsys)
    assert (failed["event"], failed["status"]) == ("remember_job.error", 502)
    assert "extract" in failed["error"]
    assert (_metric(failed_emf, "ServerErrors"), _metric(failed_emf, "ModelCallFailures")) == (1, 1)
    assert done["event"] == "remember_job.ok"


def test_a_refused_job_ends_with_a_client_error_event(db, models, sqs_jobs, capsys):
    _accepted({**ALICE, "async": True})
    capsys.readouterr()

    [reply] = pump_refused(sqs_jobs, "models: no such model")

    assert reply == {"batchItemFailures": []}
    [(log, emf)] = _job_events(capsys)
    assert (log["event"], log["status"], log["error"]) == ("remember_job.error", 400, "models: no such model")
    assert (_metric(emf, "Errors"), _metric(emf, "ServerErrors")) == (1, 0)


def test_a_redelivered_finished_job_ends_with_an_ok_event_and_no_model_call(db, models, sqs_jobs, capsys):
    accepted = _accepted({**ALICE, "async": True})
    pump(sqs_jobs)
    job = json.dumps({"v": 1, "artifact_id": accepted["artifact_id"], "user_id": "u1"})
    sqs_jobs.send(job, group="1", dedup_id="again")
    capsys.readouterr()

    pump(sqs_jobs)

    [(log, emf)] = _job_events(capsys)
    assert (log["event"], log["status"], _metric(emf, "ModelCalls")) == ("remember_job.ok", 200, 0)
