"""DELETE /v1/gb/artifacts/{id}, /v1/gb/entities/{id} and /v1/gb/edges/{id}: forget."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.forget_models import MAX_ID, ForgetResponse
from gligabao.api.models import documented_responses
from gligabao.api.validation import UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import forget

router = APIGatewayHttpRouter()

RowId = Annotated[int, Path(ge=1, le=MAX_ID)]


def _responses(kind: str, more: dict[int, str] | None = None) -> dict:
    errors = {
        400: "user_id missing or invalid, or the id is not a positive integer",
        404: f"no such {kind} among the user's datasets (another user's answers the same)",
        503: "the database is unavailable",
        **(more or {}),
    }
    return documented_responses("what was deleted", errors)


@router.delete(
    "/v1/gb/artifacts/<artifact_id>",
    tags=["forget"],
    summary="Forget a remembered text: its chunks, and the entities and facts only it supports",
    responses=_responses("artifact", {409: "the id is a chunk's: a chunk is forgotten with its text"}),
)
def forget_artifact(
    artifact_id: RowId, user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> ForgetResponse:
    return ForgetResponse.from_domain(forget.forget_artifact(deps, user_id, artifact_id))


@router.delete(
    "/v1/gb/entities/<entity_id>",
    tags=["forget"],
    summary="Forget an entity and every fact about it",
    responses=_responses("entity"),
)
def forget_entity(
    entity_id: RowId, user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> ForgetResponse:
    return ForgetResponse.from_domain(forget.forget_entity(deps, user_id, entity_id))


@router.delete(
    "/v1/gb/edges/<edge_id>",
    tags=["forget"],
    summary="Forget a fact",
    responses=_responses("edge"),
)
def forget_edge(
    edge_id: RowId, user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> ForgetResponse:
    return ForgetResponse.from_domain(forget.forget_edge(deps, user_id, edge_id))
