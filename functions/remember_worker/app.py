"""Lambda function: the remember worker (SQS jobs of asynchronous remembers). Glue only."""

from gligabao.api.worker import create_worker

handler = create_worker()
