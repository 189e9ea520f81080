"""The message of an asynchronous remember's job (memory/async_remember.py): what the queue
carries, read back by the worker and by the texts prepared ahead (memory/prepare_ahead.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

JOB_VERSION = 1


@dataclass(frozen=True)
class RememberJob:
    """What a queue message carries: the pending artifact, its user and the model options."""

    artifact_id: int
    user_id: str
    reasoning: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    eval: bool = False  # store the job's trajectory with what it stores (SPEC section 10)

    def options(self) -> dict:
        """What the job's texts are remembered with: a pending artifact keeps it (`job_options`)."""
        return {"reasoning": dict(self.reasoning), "models": dict(self.models), "eval": self.eval}

    def body(self) -> str:
        return json.dumps(
            {
                "v": JOB_VERSION,
                "artifact_id": self.artifact_id,
                "user_id": self.user_id,
                "reasoning": dict(self.reasoning),
                "models": dict(self.models),
                **({"eval": True} if self.eval else {}),
            }
        )

    @classmethod
    def from_body(cls, body: str) -> RememberJob:
        """The job of a message body; PoisonMessage when it is not one (it is never retried)."""
        try:
            data = json.loads(body)
            job = cls(
                artifact_id=data["artifact_id"],
                user_id=data["user_id"],
                reasoning=data.get("reasoning", {}),
                models=data.get("models", {}),
                eval=data.get("eval", False),
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            raise PoisonMessage("the message is not a remember job") from None
        valid = (
            isinstance(job.artifact_id, int)
            and not isinstance(job.artifact_id, bool)
            and isinstance(job.user_id, str)
            and job.user_id
            and all(isinstance(v, dict) for v in (job.reasoning, job.models))
            and isinstance(job.eval, bool)
        )
        if not valid:
            raise PoisonMessage("the message is not a remember job")
        return job


class PoisonMessage(Exception):
    """A message no attempt can process: dropped (logged), never retried, never blocking its group."""
