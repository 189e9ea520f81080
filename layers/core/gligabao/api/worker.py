"""The Lambda entry of the remember worker: SQS events of the jobs queue (memory/async_remember.py).

Partial batch failures: each record is a job; only the records that failed are reported back
(`batchItemFailures`), so SQS redelivers those and never their neighbours. The queue is FIFO and
a failed record fails the later records of its message group in the same batch unprocessed
(`skip_group_on_error`): a dataset's jobs are never applied out of order.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from gligabao import bootstrap
from gligabao.ai.snapstart import reseed_random
from gligabao.db.connection import statements_end_before
from gligabao.errors import GbError, failure_reason
from gligabao.memory import async_remember
from gligabao.memory.async_remember import AttemptFailed, GaveUp, Refused, RetryLater
from gligabao.memory.remember_job import PoisonMessage, RememberJob
from gligabao.observability.logging import get_logger
from gligabao.observability.monitoring import RequestReport, reporting
from gligabao.observability.tracing import instrumented

logger = get_logger()

JOB_OPERATION = "remember_job"  # the jobs' events and metrics, apart from the requests' own


def create_worker():
    def handler(event: dict, context: Any) -> dict:
        deps = bootstrap.bundle()
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        deadline = time.monotonic() + remaining() / 1000 if callable(remaining) else None
        processor = SqsFifoPartialProcessor(skip_group_on_error=True)
        # A batch whose every record failed is reported like any other, not raised as an error
        # of the invocation: the backoff each failed record set stays in force.
        processor.raise_on_entire_batch_failure = False
        with statements_end_before(deadline):  # a statement still running then is cut (db/connection.py)
            return process_partial_response(
                event=event,
                record_handler=lambda record: run_record(deps, record, deadline),
                processor=processor,
                context=context,
            )

    return instrumented(handler, http=False, after_restore=(reseed_random,))


def run_record(deps: bootstrap.Bundle, record: SQSRecord, deadline: float | None) -> str:
    """One job; returns its outcome, raises (the record is reported failed) when SQS must retry it.
    Each job ends with one monitoring event, `remember_job.ok` or `remember_job.error`, with the
    tokens and cost of every model call it made (those made ahead for the texts behind it too)."""
    try:
        job = RememberJob.from_body(record.body)
    except PoisonMessage as error:
        # Acknowledged, not retried: no attempt could ever process it, and in a FIFO queue it
        # would hold its group back until it reached the dead-letter queue.
        logger.error("remember.job.poison", extra={"message_id": record.message_id, "reason": str(error)})
        return "poison"
    report = RequestReport(JOB_OPERATION, request_id=record.message_id, user_id=job.user_id)
    status, error = 500, "internal error"
    try:
        with reporting(report):
            outcome = _attempt(deps, job, record, deadline)
        status, error = 200, None
        return outcome
    except Refused as refused:  # the artifact is failed; the message is done with
        status, error = refused.status, refused.error
        return "failed"
    except AttemptFailed as failed:
        status, error = failed.status, failed.error
        raise
    except Exception as exc:
        status, error = (exc.status if isinstance(exc, GbError) else 500), failure_reason(exc)
        raise
    finally:
        report.emit(status, error)


def _attempt(deps: bootstrap.Bundle, job: RememberJob, record: SQSRecord, deadline: float | None) -> str:
    attempt = int(record.attributes.approximate_receive_count or 1)
    limits = deps.limits
    context = {"artifact_id": job.artifact_id, "attempt": attempt, "message_id": record.message_id}
    try:
        outcome = async_remember.run(
            deps,
            job,
            attempt=attempt,
            max_attempts=limits.async_max_attempts,
            deadline=deadline,
            request_id=record.message_id,
        )
    except Refused as refused:
        logger.warning("remember.job.failed", extra={**context, "error": refused.error})
        raise
    except RetryLater as retry:
        delay = async_remember.retry_delay_seconds(
            attempt, limits.async_retry_backoff_s, limits.async_retry_backoff_max_s
        )
        logger.warning("remember.job.retry", extra={**context, "error": retry.error, "retry_in_s": delay})
        _retry_after(deps, record, delay, context)
        raise
    except GaveUp as gave_up:
        logger.error("remember.job.dead_letter", extra={**context, "error": gave_up.error})
        # Visible again at once: SQS moves it to the dead-letter queue on its next receive.
        _retry_after(deps, record, 0, context)
        raise
    logger.info("remember.job." + outcome.value, extra=context)
    return outcome.value


def _retry_after(deps: bootstrap.Bundle, record: SQSRecord, seconds: int, context: dict) -> None:
    try:
        deps.jobs.retry_after(record.receipt_handle, seconds)
    except Exception:  # the queue's visibility timeout then decides when it comes back
        logger.warning("remember.job.backoff_not_set", extra=context)


__all__ = ["create_worker", "run_record"]
