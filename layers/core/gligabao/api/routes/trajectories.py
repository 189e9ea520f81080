"""Eval trajectories (SPEC section 10): GET /v1/gb/trajectories/{id} and GET /v1/gb/trajectories."""

from __future__ import annotations

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import Field

from gligabao.api.deps import memory
from gligabao.api.models import database_route_responses
from gligabao.api.readback_models import MAX_ROW_ID, PageCursor, PageLimit, RowId
from gligabao.api.trajectory_models import TrajectoryList, TrajectoryRecord
from gligabao.api.validation import DatasetField, SessionId, UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import trajectory_reads

router = APIGatewayHttpRouter()


ArtifactFilter = Annotated[
    int | None, Field(ge=1, le=MAX_ROW_ID, description="only the remember that stored this artifact")
]
KindFilter = Annotated[
    Literal["remember", "query"] | None, Field(description="only remembers, or only queries")
]


@router.get(
    "/v1/gb/trajectories/<trajectory_id>",
    tags=["evals"],
    summary="The ATIF trajectory of one eval call",
    responses=database_route_responses(
        "the trajectory, with its dataset, kind, session and artifact",
        {400: "a bad user_id or id", 404: "the user has no such trajectory"},
    ),
)
def get_trajectory(
    trajectory_id: Annotated[RowId, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
) -> TrajectoryRecord:
    return TrajectoryRecord.from_domain(trajectory_reads.read_trajectory(deps, user_id, trajectory_id))


@router.get(
    "/v1/gb/trajectories",
    tags=["evals"],
    summary="A page of a dataset's eval trajectories, oldest first: by session, kind or artifact",
    responses=database_route_responses(
        "a page of trajectory summaries (none: an empty list)",
        {
            400: "a bad user_id, dataset, session_id, kind, artifact_id, limit or cursor",
            404: "the dataset does not exist for this user",
        },
    ),
)
def list_trajectories(
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    dataset: Annotated[DatasetField, Query()] = "main",
    session_id: Annotated[SessionId, Query()] = None,
    kind: Annotated[KindFilter, Query()] = None,
    artifact_id: Annotated[ArtifactFilter, Query()] = None,
    limit: Annotated[PageLimit, Query()] = None,
    cursor: Annotated[PageCursor, Query()] = None,
) -> TrajectoryList:
    page, next_cursor = trajectory_reads.list_trajectories(
        deps,
        user_id,
        dataset,
        session_id=session_id,
        kind=kind,
        artifact_id=artifact_id,
        limit=limit,
        cursor=cursor,
    )
    return TrajectoryList.from_domain(dataset, page, next_cursor)
