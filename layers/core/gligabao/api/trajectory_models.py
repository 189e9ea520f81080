"""The ATIF trajectory of an eval call as the API returns it (in remember and query responses, and by
the trajectories routes), and the response models of GET /v1/gb/trajectories[/{id}].

The models follow ATIF v1.8 (../shared/ATIF.md) for the fields gligabao writes; unset fields are
omitted, as ATIF's own serialisation does. Tests validate what is returned with the `atif` package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from gligabao.api.models import absent
from gligabao.model import TRAJECTORY_KINDS
from gligabao.timefmt import rfc3339

if TYPE_CHECKING:  # the client imports these models without the memory core
    from gligabao.db.trajectories import StoredTrajectory

EVAL_DESCRIPTION = (
    "true: an eval call. Its ATIF v1.8 trajectory (every stage's inputs, outputs and duration, every "
    "model call's model, reasoning level, tokens and cost) is stored and returned as `trajectory`"
)
TRAJECTORY_DESCRIPTION = (
    'an eval call\'s ("eval": true) ATIF v1.8 trajectory, as stored (GET /v1/gb/trajectories/{id} with its '
    "trajectory_id); omitted otherwise"
)


class StepMetrics(BaseModel):
    prompt_tokens: int | None = Field(
        default=None, exclude_if=absent, description="all input tokens, cached ones included"
    )
    completion_tokens: int | None = Field(default=None, exclude_if=absent)
    cached_tokens: int | None = Field(
        default=None, exclude_if=absent, description="of prompt_tokens, read from the prompt cache"
    )
    cost_usd: float | None = Field(default=None, exclude_if=absent)
    extra: dict[str, Any] | None = Field(default=None, exclude_if=absent, description="thinking_tokens")


class TrajectoryStep(BaseModel):
    step_id: int = Field(ge=1, description="1, 2, 3, ... in order")
    timestamp: str | None = Field(
        default=None, exclude_if=absent, description="ISO 8601: when the stage began (user and system steps)"
    )
    source: Literal["user", "system", "agent"] = Field(
        description="user: the request; system: a pipeline stage; agent: a model call, or the final answer"
    )
    message: str = Field(
        description="user: the question or the text; system: the stage's name; agent: the answer on the "
        "final step, a failed call's error, else empty"
    )
    model_name: str | None = Field(default=None, exclude_if=absent, description="agent steps")
    reasoning_effort: str | None = Field(
        default=None, exclude_if=absent, description="agent steps: none, low, medium or high (LLM calls)"
    )
    llm_call_count: int | None = Field(
        default=None,
        exclude_if=absent,
        description="agent steps: 1 for a model call, 0 for a final step without one",
    )
    metrics: StepMetrics | None = Field(
        default=None, exclude_if=absent, description="agent steps of a model call"
    )
    extra: dict[str, Any] | None = Field(
        default=None,
        exclude_if=absent,
        description="system: stage, inputs, outputs, duration_ms (null: not measurable apart) and note; "
        "agent: stage, duration_ms, ok, error",
    )


class TrajectoryAgent(BaseModel):
    name: str = Field(description="gligabao")
    version: str = Field(description="the package version")
    model_name: str | None = Field(default=None, exclude_if=absent, description="the first LLM call's model")


class FinalMetrics(BaseModel):
    total_prompt_tokens: int | None = Field(default=None, exclude_if=absent)
    total_completion_tokens: int | None = Field(default=None, exclude_if=absent)
    total_cached_tokens: int | None = Field(default=None, exclude_if=absent)
    total_cost_usd: float | None = Field(default=None, exclude_if=absent)
    total_steps: int | None = Field(default=None, exclude_if=absent)
    extra: dict[str, Any] | None = Field(
        default=None,
        exclude_if=absent,
        description="duration_ms of the call, llm_calls, embedding_calls, failed_calls, thinking_tokens",
    )


class Trajectory(BaseModel):
    """An ATIF v1.8 trajectory of one eval call."""

    schema_version: str = Field(description="ATIF-v1.8")
    session_id: str | None = Field(
        default=None, exclude_if=absent, description="the call's session_id, else the trajectory's own id"
    )
    trajectory_id: str | None = Field(
        default=None, exclude_if=absent, description="the id of GET /v1/gb/trajectories/{id}, as a string"
    )
    agent: TrajectoryAgent
    steps: list[TrajectoryStep]
    notes: str | None = Field(default=None, exclude_if=absent)
    final_metrics: FinalMetrics | None = Field(default=None, exclude_if=absent)
    extra: dict[str, Any] | None = Field(
        default=None,
        exclude_if=absent,
        description="kind (remember or query), dataset, request_id, started_at, input (the request), "
        "artifact_id (remember)",
    )


class TrajectoryRecord(BaseModel):
    """GET /v1/gb/trajectories/{id}."""

    id: int
    dataset: str
    kind: str = Field(description="remember or query", json_schema_extra={"enum": list(TRAJECTORY_KINDS)})
    session_id: str = Field(description="the trajectory's session_id")
    artifact_id: int | None = Field(description="a remember's artifact; null for a query")
    created_at: str = Field(description="RFC 3339, UTC")
    trajectory: Trajectory

    @classmethod
    def from_domain(cls, stored: StoredTrajectory) -> TrajectoryRecord:
        return cls(**_summary_fields(stored), trajectory=Trajectory.model_validate(stored.trajectory or {}))


class TrajectorySummary(BaseModel):
    id: int
    kind: str = Field(description="remember or query", json_schema_extra={"enum": list(TRAJECTORY_KINDS)})
    session_id: str
    artifact_id: int | None = Field(description="a remember's artifact; null for a query")
    created_at: str = Field(description="RFC 3339, UTC")
    steps: int
    final_metrics: FinalMetrics | None

    @classmethod
    def from_domain(cls, stored: StoredTrajectory) -> TrajectorySummary:
        fields = _summary_fields(stored)
        fields.pop("dataset")
        return cls(
            **fields,
            steps=stored.steps,
            final_metrics=FinalMetrics.model_validate(stored.final_metrics) if stored.final_metrics else None,
        )


class TrajectoryList(BaseModel):
    """GET /v1/gb/trajectories: a page of a dataset's trajectories, oldest first."""

    dataset: str
    trajectories: list[TrajectorySummary] = Field(description="GET /v1/gb/trajectories/{id} for the steps")
    next_cursor: str | None = Field(description="pass it as cursor for the next page; null on the last page")

    @classmethod
    def from_domain(
        cls, dataset: str, page: list[StoredTrajectory], next_cursor: str | None
    ) -> TrajectoryList:
        return cls(
            dataset=dataset,
            trajectories=[TrajectorySummary.from_domain(t) for t in page],
            next_cursor=next_cursor,
        )


def _summary_fields(stored: StoredTrajectory) -> dict[str, Any]:
    return {
        "id": stored.id,
        "dataset": stored.dataset,
        "kind": stored.kind,
        "session_id": stored.session_id or str(stored.id),
        "artifact_id": stored.artifact_id,
        "created_at": rfc3339(stored.created_at),
    }


EVAL_ROUTE_DESCRIPTION = (
    "The gligabao server's eval route: the same body and answer as without `/eval`, as an eval call "
    '(`"eval": true` is implied), with `trajectory_id` and `trajectory`.'
)
TRAJECTORY_ID_DESCRIPTION = "the id of the stored trajectory: GET /v1/gb/trajectories/{trajectory_id}"


def stored_trajectory_id(trajectory: dict[str, Any] | None) -> int | None:
    """The id the trajectory was stored under (its trajectory_id, a string in ATIF)."""
    return int(trajectory["trajectory_id"]) if trajectory and trajectory.get("trajectory_id") else None


def trajectory_out(trajectory: dict[str, Any] | None) -> Trajectory | None:
    """An eval call's trajectory for its response; None (omitted) when the call was no eval call."""
    return Trajectory.model_validate(trajectory) if trajectory is not None else None
