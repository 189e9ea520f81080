"""Asynchronous remember through SQS (moto): 202 and a pending artifact, the worker's pipeline,
retries with backoff, the dead-letter queue, redelivery, poison messages, batch order and the
automatic switch for a long text."""

from __future__ import annotations

import json

from fakes.anthropic_server import Reply
from graph_rows import graph_counts
from job_helpers import MAX_ATTEMPTS, artifact_status, pump, pump_refused
from remember_helpers import call_handler, remember_handler

ALICE = {"user_id": "u1", "dataset": "main", "text": "Alice works at Acme.", "session_id": "s1"}


def _remember_async(body: dict) -> int:
    reply = call_handler(remember_handler(), {**body, "async": True})
    assert reply.status == 202, reply.json
    assert reply.json["status"] == "pending"
    return reply.json["artifact_id"]


def test_async_remember_answers_202_then_the_worker_stores_the_text(db, models, sqs_jobs):
    from gligabao import bootstrap
    from gligabao.memory.readback import read_artifact

    fake_anthropic, _ = models
    artifact_id = _remember_async(ALICE)

    assert artifact_status(db, artifact_id) == ("pending", None)
    pending = read_artifact(bootstrap.bundle(), "u1", artifact_id)
    assert (pending.artifact.status, pending.entities, pending.edges) == ("pending", [], [])
    assert fake_anthropic.messages == []  # no model call before the worker runs
    assert graph_counts(db)["gb_entities"] == 0

    [reply] = pump(sqs_jobs)

    assert reply == {"batchItemFailures": []}
    assert artifact_status(db, artifact_id) == ("done", None)
    stored = read_artifact(bootstrap.bundle(), "u1", artifact_id)
    assert stored.artifact.session_id == "s1"
    assert sorted(e.name for e in stored.entities) == ["Acme", "Alice"]
    assert [e.relation for e in stored.edges] == ["works_at"]
    assert graph_counts(db)["gb_artifacts"] == 1  # the pending artifact was filled, none inserted


def test_a_text_longer_than_the_threshold_is_remembered_asynchronously_without_asking(db, models, sqs_jobs):
    from conftest import reconfigure

    from gligabao import bootstrap

    limits = bootstrap.bundle().limits.model_copy(update={"async_remember_threshold_chars": 30})
    reconfigure(limits=limits)
    handler = remember_handler()

    short = call_handler(handler, {**ALICE, "text": "Bob works at Acme."})
    long = call_handler(handler, {**ALICE, "text": "Alice works at Acme. Alice lives in Paris."})

    assert short.status == 200 and "entities" in short.json
    assert long.status == 202 and long.json == {"artifact_id": long.json["artifact_id"], "status": "pending"}
    pump(sqs_jobs)
    assert artifact_status(db, long.json["artifact_id"]) == ("done", None)


def test_a_failed_model_call_is_retried_by_the_queue_and_nothing_is_half_stored(db, models, sqs_jobs):
    from conftest import reconfigure

    from gligabao import bootstrap

    fake_anthropic, _ = models
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"provider_max_attempts": 1}))
    artifact_id = _remember_async(ALICE)
    fake_anthropic.queue(Reply.error(500))

    first, second = pump(sqs_jobs, rounds=2)

    assert len(first["batchItemFailures"]) == 1
    assert second == {"batchItemFailures": []}
    assert artifact_status(db, artifact_id) == ("done", None)
    assert graph_counts(db)["gb_edges"] == 1
    assert graph_counts(db)["gb_artifacts"] == 1


def test_after_a_failed_attempt_the_artifact_is_pending_with_the_error_and_nothing_else_is_stored(
    db, models, sqs_jobs
):
    from conftest import reconfigure

    from gligabao import bootstrap

    fake_anthropic, _ = models
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"provider_max_attempts": 1}))
    artifact_id = _remember_async(ALICE)
    fake_anthropic.queue(Reply.error(500))

    [reply] = pump(sqs_jobs, rounds=1)

    assert len(reply["batchItemFailures"]) == 1
    status, error = artifact_status(db, artifact_id)
    assert status == "pending" and error.startswith(f"attempt 1 of {MAX_ATTEMPTS} failed:")
    counts = graph_counts(db)
    assert (counts["gb_entities"], counts["gb_edges"], counts["gb_artifacts"]) == (0, 0, 1)


def test_a_job_failing_every_attempt_lands_in_the_dead_letter_queue_with_its_artifact_failed(
    db, models, sqs_jobs
):
    from conftest import reconfigure

    from gligabao import bootstrap

    fake_anthropic, _ = models
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"provider_max_attempts": 1}))
    artifact_id = _remember_async(ALICE)
    fake_anthropic.queue(Reply.error(500), times=MAX_ATTEMPTS)

    replies = pump(sqs_jobs)

    assert [len(r["batchItemFailures"]) for r in replies] == [1] * MAX_ATTEMPTS
    [dead] = sqs_jobs.dead_letters()
    assert json.loads(dead["Body"])["artifact_id"] == artifact_id
    status, error = artifact_status(db, artifact_id)
    assert status == "failed" and f"(after {MAX_ATTEMPTS} attempts)" in error
    counts = graph_counts(db)
    assert (counts["gb_entities"], counts["gb_edges"], counts["gb_artifacts"]) == (0, 0, 1)


def test_the_redelivery_of_a_finished_job_stores_nothing_twice_and_calls_no_model(db, models, sqs_jobs):
    fake_anthropic, fake_openai = models
    artifact_id = _remember_async(ALICE)
    pump(sqs_jobs)
    counts, calls = graph_counts(db), (len(fake_anthropic.messages), len(fake_openai.requests))
    job = json.dumps({"v": 1, "artifact_id": artifact_id, "user_id": "u1", "reasoning": {}, "models": {}})

    sqs_jobs.send(job, group="1", dedup_id="redelivered")
    [reply] = pump(sqs_jobs)

    assert reply == {"batchItemFailures": []}
    assert graph_counts(db) == counts
    assert (len(fake_anthropic.messages), len(fake_openai.requests)) == calls


def test_a_delivery_that_finds_the_artifact_stored_meanwhile_rolls_back_everything(db, models, sqs_jobs):
    import pytest

    from gligabao import bootstrap
    from gligabao.memory.remember import AlreadyStored, TextToRemember, remember_text

    artifact_id = _remember_async(ALICE)
    pump(sqs_jobs)
    counts = graph_counts(db)

    with pytest.raises(AlreadyStored):
        remember_text(
            bootstrap.bundle(),
            TextToRemember(user_id="u1", dataset="main", text="Alice works at Acme. Bob lives in Rome."),
            artifact_id=artifact_id,
        )

    assert graph_counts(db) == counts


def test_a_poison_message_is_dropped_and_never_holds_back_the_jobs_after_it(db, models, sqs_jobs):
    artifact_id = _remember_async(ALICE)  # queued first, then the poison in the same group
    group = str(db.execute("SELECT id FROM gb_datasets").fetchone()[0])
    for dedup_id, body in [("p1", "not json"), ("p2", '{"artifact_id": "1"}'), ("p3", "[]")]:
        sqs_jobs.send(body, group=group, dedup_id=dedup_id)
    later = _remember_async({**ALICE, "text": "Bob lives in Rome."})

    replies = pump(sqs_jobs)

    assert all(r == {"batchItemFailures": []} for r in replies) and len(replies) == 5
    assert artifact_status(db, artifact_id) == ("done", None)
    assert artifact_status(db, later) == ("done", None)
    assert sqs_jobs.dead_letters() == []


def test_a_job_of_another_user_is_skipped_by_row_level_security(db, models, sqs_jobs):
    fake_anthropic, _ = models
    artifact_id = _remember_async(ALICE)
    pump(sqs_jobs)
    db.execute("UPDATE gb_artifacts SET status = 'pending' WHERE id = %s", [artifact_id])
    job = json.dumps({"artifact_id": artifact_id, "user_id": "intruder"})
    calls = len(fake_anthropic.messages)

    sqs_jobs.send(job, group="1", dedup_id="intruder")
    pump(sqs_jobs)

    assert artifact_status(db, artifact_id) == ("pending", None)
    assert len(fake_anthropic.messages) == calls


def test_a_request_error_fails_the_artifact_at_once_without_retries(db, models, sqs_jobs):
    artifact_id = _remember_async(ALICE)

    [reply] = pump_refused(sqs_jobs, "models: no such model")

    assert reply == {"batchItemFailures": []}
    assert artifact_status(db, artifact_id) == ("failed", "models: no such model")
    assert sqs_jobs.dead_letters() == []


def test_async_remember_without_a_queue_is_503_and_stores_nothing(db, models):
    reply = call_handler(remember_handler(), {**ALICE, "async": True})

    assert reply.status == 503
    assert "GB_JOBS_QUEUE_URL" in reply.json["error"]
    assert graph_counts(db)["gb_artifacts"] == 0


def test_when_the_queue_refuses_the_job_the_answer_is_503_and_the_artifact_failed(db, models, sqs_jobs):
    from gligabao import bootstrap
    from gligabao.aws.job_queue import SqsJobQueue

    missing = sqs_jobs.url.replace("jobs.fifo", "missing.fifo")
    bootstrap.bundle().use_job_queue(SqsJobQueue(missing, client=sqs_jobs.sqs))

    reply = call_handler(remember_handler(), {**ALICE, "async": True})

    assert reply.status == 503 and reply.json == {
        "error": "the job queue is unavailable; nothing was remembered"
    }
    [(status, error)] = db.execute("SELECT status, error FROM gb_artifacts").fetchall()
    assert (status, error) == ("failed", "the job could not be queued")


def test_a_batch_queues_its_texts_in_order_of_reference_time_so_later_facts_supersede(db, models, sqs_jobs):
    texts = [
        {"text": "Alice lives in Rome.", "reference_time": "2025-06-01T00:00:00Z"},
        {"text": "Alice lives in Oslo.", "reference_time": "2026-06-01T00:00:00Z"},
        {"text": "Alice lives in Paris.", "reference_time": "2024-06-01T00:00:00Z"},
    ]
    batch = _batch_handler_reply({"user_id": "u1", "dataset": "main", "texts": texts})
    rome, oslo, paris = (a["artifact_id"] for a in batch["artifacts"])

    pump(sqs_jobs, batch_size=10)

    rows = db.execute(
        """SELECT t.name, e.invalid_at IS NULL AND e.expired_at IS NULL AS live
           FROM gb_edges e JOIN gb_entities t ON t.id = e.target_id ORDER BY t.name"""
    ).fetchall()
    assert rows == [("Oslo", True), ("Paris", False), ("Rome", False)]
    assert [artifact_status(db, i)[0] for i in (rome, oslo, paris)] == ["done"] * 3


def _batch_handler_reply(body: dict) -> dict:
    reply = call_handler(remember_handler(), body, path="/v1/gb/remember/batch")
    assert reply.status == 202, reply.json
    return reply.json


def test_without_a_provider_key_an_async_remember_is_503_and_queues_nothing(db, sqs_jobs):
    reply = call_handler(remember_handler(), {**ALICE, "async": True})

    assert reply.status == 503 and "ANTHROPIC_API_KEY" in reply.json["error"]
    assert graph_counts(db)["gb_artifacts"] == 0
    assert pump(sqs_jobs) == []


class _Killed(BaseException):
    """The end of an invocation that runs none of the worker's code (the Lambda's timeout, memory)."""


def _attempt_killed(sqs_jobs) -> None:
    """One delivery whose invocation is ended mid-job: the message is neither deleted nor given a
    backoff, and comes back when its visibility timeout ends (at once here)."""
    from job_helpers import lambda_record, worker

    from gligabao.local.server import LambdaContext

    [message] = sqs_jobs.sqs.receive_message(QueueUrl=sqs_jobs.url, AttributeNames=["All"])["Messages"]
    event = {"Records": [lambda_record(message, sqs_jobs.url)]}
    try:
        worker()(event, LambdaContext("remember-worker", "test", timeout_ms=300_000))
    except _Killed:
        pass
    sqs_jobs.sqs.change_message_visibility(
        QueueUrl=sqs_jobs.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )


def test_a_job_whose_last_attempt_is_killed_reads_as_failed_once_that_attempt_has_ended(
    db, models, sqs_jobs, monkeypatch
):
    from gligabao import bootstrap
    from gligabao.memory import async_remember
    from gligabao.memory.datasets import list_datasets
    from gligabao.memory.readback import read_artifact, read_session

    def killed(*args, **kwargs):
        raise _Killed

    monkeypatch.setattr(async_remember, "remember_text", killed)
    artifact_id = _remember_async(ALICE)

    def gives_up_in() -> float | None:
        row = db.execute(
            "SELECT extract(epoch FROM gives_up_at - now()) FROM gb_artifacts WHERE id = %s", [artifact_id]
        ).fetchone()
        return None if row[0] is None else float(row[0])

    def seen() -> tuple:
        """The artifact's status as its page and its session's page read it, and its dataset's counts."""
        [dataset] = list_datasets(bootstrap.bundle(), "u1")
        artifact = read_artifact(bootstrap.bundle(), "u1", artifact_id).artifact
        [in_session] = read_session(bootstrap.bundle(), "u1", "main", ALICE["session_id"]).artifacts
        assert in_session.status == artifact.status
        return artifact.status, dataset.queued, dataset.failed

    for _ in range(MAX_ATTEMPTS - 1):
        _attempt_killed(sqs_jobs)
        assert gives_up_in() is None  # another attempt is coming
        assert seen() == ("running", 1, 0)

    _attempt_killed(sqs_jobs)  # the last: its message goes to the dead-letter queue
    assert pump(sqs_jobs) == []
    assert len(sqs_jobs.dead_letters()) == 1
    assert 300 < gives_up_in() <= 360  # the attempt's 300 s and the margin
    assert seen() == ("running", 1, 0)  # it may still be running

    db.execute(
        "UPDATE gb_artifacts SET gives_up_at = now() - interval '1 second' WHERE id = %s", [artifact_id]
    )
    assert seen() == ("failed", 0, 1)
    error = read_artifact(bootstrap.bundle(), "u1", artifact_id).artifact.error
    assert "ended before it finished" in error

    monkeypatch.undo()  # a redrive runs the artifact again, from its first attempt
    sqs_jobs.send(
        async_remember.RememberJob(artifact_id, "u1").body(),
        group="redrive",
        dedup_id=f"redrive-{artifact_id}",
    )
    pump(sqs_jobs)
    assert artifact_status(db, artifact_id) == ("done", None)
    assert seen() == ("done", 0, 0)


class _RefusingTheSecondBatch:
    """An SQS client that takes the first SendMessageBatch and refuses every later one."""

    def __init__(self, sqs):
        self._sqs, self.batches = sqs, 0

    def send_message_batch(self, **request):
        self.batches += 1
        if self.batches == 1:
            return self._sqs.send_message_batch(**request)
        return {"Failed": [{"Id": e["Id"], "Code": "ServiceUnavailable"} for e in request["Entries"]]}


def test_a_batch_the_queue_takes_only_in_part_is_503_and_its_queued_jobs_store_nothing(db, models, sqs_jobs):
    from gligabao import bootstrap
    from gligabao.aws.job_queue import SqsJobQueue
    from gligabao.memory.datasets import list_datasets

    fake_anthropic, _ = models
    bootstrap.bundle().use_job_queue(SqsJobQueue(sqs_jobs.url, client=_RefusingTheSecondBatch(sqs_jobs.sqs)))
    texts = [{"text": f"Person{i} lives in Rome."} for i in range(12)]  # two SendMessageBatch calls

    reply = call_handler(
        remember_handler(), {"user_id": "u1", "dataset": "main", "texts": texts}, path="/v1/gb/remember/batch"
    )

    assert reply.status == 503 and "nothing was remembered" in reply.json["error"]
    replies = pump(sqs_jobs)
    assert len(replies) == 10  # the first batch's jobs were queued, and each found its artifact cancelled
    assert fake_anthropic.messages == []
    assert graph_counts(db)["gb_entities"] == 0
    statuses = db.execute("SELECT status, error FROM gb_artifacts").fetchall()
    assert statuses == [("failed", "the job could not be queued")] * 12
    [dataset] = list_datasets(bootstrap.bundle(), "u1")
    assert (dataset.queued, dataset.failed) == (0, 12)


class _StoringTheFirstBatchThenRefusing(_RefusingTheSecondBatch):
    """Takes the first SendMessageBatch, runs its jobs to the end, then refuses the next one: the
    race where a job stores its whole text before the queue refuses the rest of its request."""

    def __init__(self, sqs, run_jobs):
        super().__init__(sqs)
        self._run_jobs = run_jobs

    def send_message_batch(self, **request):
        if self.batches == 1:
            self._run_jobs()
        return super().send_message_batch(**request)


def test_a_text_stored_before_the_queue_refused_the_rest_of_its_request_is_forgotten(db, models, sqs_jobs):
    from conftest import reconfigure

    from gligabao import bootstrap
    from gligabao.aws.job_queue import SqsJobQueue
    from gligabao.memory.datasets import list_datasets

    # One text at a time: a window would store the texts queued after the refusal too (forgotten the same).
    reconfigure(limits=bootstrap.bundle().limits.model_copy(update={"bulk_window_texts": 1}))
    _remember_async(ALICE)  # a text of another request, remembered before: it stays
    pump(sqs_jobs)
    stored: list = []
    artifact_counts_before_refusal: list = []

    def run_jobs():
        stored.extend(pump(sqs_jobs))
        artifact_counts_before_refusal.extend(
            db.execute("SELECT status, count(*) FROM gb_artifacts GROUP BY 1 ORDER BY 1").fetchall()
        )

    queue = _StoringTheFirstBatchThenRefusing(sqs_jobs.sqs, run_jobs)
    bootstrap.bundle().use_job_queue(SqsJobQueue(sqs_jobs.url, client=queue))
    texts = [{"text": f"Person{i} lives in Rome."} for i in range(12)]

    reply = call_handler(
        remember_handler(), {"user_id": "u1", "dataset": "main", "texts": texts}, path="/v1/gb/remember/batch"
    )

    assert reply.status == 503 and "nothing was remembered" in reply.json["error"]
    assert len(stored) == 10  # the first batch's jobs ran to the end before the refusal
    assert artifact_counts_before_refusal == [("done", 11), ("pending", 2)]
    names = {row[0] for row in db.execute("SELECT name FROM gb_entities")}
    assert not any(name.startswith("Person") for name in names) and "Alice" in names
    assert "Rome" not in names  # held only by the forgotten texts
    statuses = db.execute("SELECT status, count(*) FROM gb_artifacts GROUP BY 1 ORDER BY 1").fetchall()
    assert statuses == [("done", 1), ("failed", 2)]  # ALICE's; the two never queued (the ten forgotten)
    [dataset] = list_datasets(bootstrap.bundle(), "u1")
    assert (dataset.queued, dataset.failed) == (0, 2)


def test_a_job_whose_request_is_cancelled_while_it_runs_rolls_back_what_it_stored(db, models, sqs_jobs):
    from remember_helpers import rule_based_model, stage_of

    fake_anthropic, _ = models
    artifact_id = _remember_async(ALICE)

    def cancel_then_answer(body: dict):
        if stage_of(body) == "extract":  # the job has claimed the artifact: the request is refused now
            db.execute(
                "UPDATE gb_artifacts SET status = 'failed', error = 'the job could not be queued' WHERE id = %s",
                [artifact_id],
            )
        return rule_based_model(body)

    fake_anthropic.responder = cancel_then_answer

    assert pump(sqs_jobs) == [{"batchItemFailures": []}]
    assert artifact_status(db, artifact_id) == ("failed", "the job could not be queued")
    assert graph_counts(db)["gb_entities"] == 0
