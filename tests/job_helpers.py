"""Helpers of the asynchronous remember tests: the jobs queue and its dead-letter queue in moto's
SQS (FIFO, a redrive policy as in template.yaml), and a pump that plays Lambda's SQS event source:
it receives messages, invokes the worker with them and deletes those not reported failed."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

MAX_ATTEMPTS = 3  # the tests' maxReceiveCount (the template's default is 5)


@dataclass
class Queues:
    sqs: object
    url: str
    dead_letter_url: str

    def dead_letters(self) -> list[dict]:
        reply = self.sqs.receive_message(
            QueueUrl=self.dead_letter_url, MaxNumberOfMessages=10, AttributeNames=["All"]
        )
        return reply.get("Messages", [])

    def send(self, body: str, group: str, dedup_id: str) -> None:
        self.sqs.send_message(
            QueueUrl=self.url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=dedup_id
        )


@pytest.fixture
def sqs_jobs(aws_env, db):
    """The jobs queue in moto's SQS, installed as the bundle's queue; no backoff, 3 attempts."""
    import boto3
    from conftest import reconfigure
    from moto import mock_aws

    from gligabao import bootstrap
    from gligabao.aws.job_queue import SqsJobQueue
    from gligabao.limits import Limits

    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        dead = sqs.create_queue(QueueName="jobs-dlq.fifo", Attributes=fifo)["QueueUrl"]
        dead_arn = sqs.get_queue_attributes(QueueUrl=dead, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        redrive = json.dumps({"deadLetterTargetArn": dead_arn, "maxReceiveCount": MAX_ATTEMPTS})
        url = sqs.create_queue(
            QueueName="jobs.fifo", Attributes={**fifo, "RedrivePolicy": redrive, "VisibilityTimeout": "60"}
        )["QueueUrl"]
        limits = bootstrap.bundle().limits.model_copy(
            update={"async_max_attempts": MAX_ATTEMPTS, "async_retry_backoff_s": 0.0}
        )
        reconfigure(jobs_queue_url=url, limits=Limits.model_validate(limits.model_dump()))
        bootstrap.bundle().use_job_queue(SqsJobQueue(url, client=sqs))
        yield Queues(sqs, url, dead)
        bootstrap.bundle().use_job_queue(None)


def worker():
    from gligabao.api.worker import create_worker

    return create_worker()


def pump(queues: Queues, handler=None, *, rounds: int = 50, batch_size: int = 1) -> list[dict]:
    """Deliver the queue's visible messages to the worker until none is left (at most `rounds`
    receives); the worker's replies, in order."""
    from gligabao.local.server import LambdaContext

    handler = handler or worker()
    replies = []
    for _ in range(rounds):
        messages = queues.sqs.receive_message(
            QueueUrl=queues.url, MaxNumberOfMessages=batch_size, AttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            break
        event = {"Records": [lambda_record(m, queues.url) for m in messages]}
        reply = handler(event, LambdaContext("remember-worker", "test", timeout_ms=300_000))
        replies.append(reply)
        failed = {f["itemIdentifier"] for f in reply["batchItemFailures"]}
        for message in messages:
            if message["MessageId"] not in failed:
                queues.sqs.delete_message(QueueUrl=queues.url, ReceiptHandle=message["ReceiptHandle"])
    return replies


def lambda_record(message: dict, queue_url: str) -> dict:
    """An SQS message as Lambda's event source hands it to the function."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:" + queue_url.rsplit("/", 1)[-1],
        "awsRegion": "us-east-1",
    }


def pump_refused(queues: Queues, error: str = "models: no such model") -> list[dict]:
    """`pump`, with the worker's remember refusing every text as a request error (400)."""
    from gligabao.errors import BadRequest
    from gligabao.memory import async_remember

    def refused(*args, **kwargs):
        raise BadRequest(error)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(async_remember, "remember_text", refused)
        return pump(queues)


def artifact_status(db, artifact_id: int) -> tuple[str, str | None]:
    row = db.execute("SELECT status, error FROM gb_artifacts WHERE id = %s", [artifact_id]).fetchone()
    return row[0], row[1]


@pytest.fixture
def local_jobs(db):
    """The in-process queue `gligabao serve` runs, installed as the bundle's; stopped after."""
    from gligabao import bootstrap
    from gligabao.local.job_queue import LocalJobQueue

    queue = LocalJobQueue(worker(), max_attempts=bootstrap.bundle().limits.async_max_attempts)
    bootstrap.bundle().use_job_queue(queue)
    yield queue
    queue.stop()
    bootstrap.bundle().use_job_queue(None)
