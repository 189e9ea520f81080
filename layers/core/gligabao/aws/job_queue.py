"""The job queue of asynchronous remembers on AWS: an SQS FIFO queue (memory.ports.JobQueue).

The message group is the dataset, so SQS delivers one dataset's jobs one at a time in the order
sent; the deduplication id is the artifact's id, so a send repeated within five minutes (a client
retry after a lost response) queues nothing twice."""

from __future__ import annotations

import boto3
from botocore.config import Config

SEND_BATCH_MAX = 10  # SQS SendMessageBatch takes at most 10 messages
_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=3, read_timeout=5)


class JobQueueError(Exception):
    """SQS did not accept every message."""


class SqsJobQueue:
    def __init__(self, queue_url: str, client=None):
        self.queue_url = queue_url
        self._sqs = client or boto3.client("sqs", config=_CLIENT_CONFIG)

    def __repr__(self) -> str:
        return f"SqsJobQueue({self.queue_url!r})"

    def enqueue(self, group: str, messages: list[tuple[str, str]]) -> None:
        """Batches of 10 in order: a batch is sent only once the one before is accepted, so the group's
        order is the order given even when a batch fails part-way (the rest is then not sent)."""
        for start in range(0, len(messages), SEND_BATCH_MAX):
            batch = messages[start : start + SEND_BATCH_MAX]
            reply = self._sqs.send_message_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {
                        "Id": str(index),
                        "MessageBody": body,
                        "MessageGroupId": group,
                        "MessageDeduplicationId": dedup_id,
                    }
                    for index, (dedup_id, body) in enumerate(batch)
                ],
            )
            if reply.get("Failed"):
                codes = sorted({failure.get("Code", "?") for failure in reply["Failed"]})
                raise JobQueueError(f"SQS refused {len(reply['Failed'])} message(s): {', '.join(codes)}")

    def retry_after(self, receipt: str, seconds: int) -> None:
        self._sqs.change_message_visibility(
            QueueUrl=self.queue_url, ReceiptHandle=receipt, VisibilityTimeout=int(seconds)
        )
