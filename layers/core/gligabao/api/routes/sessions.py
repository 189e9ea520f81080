"""Reading memory back: GET /v1/gb/sessions/{session_id}, GET /v1/gb/artifacts/{id} and
GET /v1/gb/entities/{id}."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.models import database_route_responses
from gligabao.api.readback_models import (
    ArtifactReadback,
    EntityReadback,
    KindFilter,
    PageCursor,
    PageLimit,
    PathSessionId,
    RowId,
    SessionReadback,
)
from gligabao.api.validation import DatasetField, UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import readback

router = APIGatewayHttpRouter()


@router.get(
    "/v1/gb/sessions/<session_id>",
    tags=["read back"],
    summary="What a session touched: its artifacts, and the entities and edges it mentioned",
    responses=database_route_responses(
        "a page of each list (an unknown session: empty lists)",
        {
            400: "a bad user_id, dataset, session_id (percent-encoded in the path), kind, limit or cursor",
            404: "the dataset does not exist for this user",
        },
    ),
)
def get_session(
    session_id: Annotated[PathSessionId, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    dataset: Annotated[DatasetField, Query()] = "main",
    limit: Annotated[PageLimit, Query()] = None,
    cursor: Annotated[PageCursor, Query()] = None,
    kind: Annotated[KindFilter, Query()] = None,
) -> SessionReadback:
    page = readback.read_session(deps, user_id, dataset, session_id, limit=limit, cursor=cursor, kind=kind)
    return SessionReadback.from_domain(page)


@router.get(
    "/v1/gb/artifacts/<artifact_id>",
    tags=["read back"],
    summary="One artifact: its text, chunks, and the entities and edges it stated",
    responses=database_route_responses(
        "the artifact",
        {400: "a bad user_id or id", 404: "the user has no such artifact"},
    ),
)
def get_artifact(
    artifact_id: Annotated[RowId, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
) -> ArtifactReadback:
    return ArtifactReadback.from_domain(readback.read_artifact(deps, user_id, artifact_id))


@router.get(
    "/v1/gb/entities/<entity_id>",
    tags=["read back"],
    summary="One entity and its timeline: every edge touching it, live and superseded",
    responses=database_route_responses(
        "the entity and a page of its timeline",
        {400: "a bad user_id, id, limit or cursor", 404: "the user has no such entity"},
    ),
)
def get_entity(
    entity_id: Annotated[RowId, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    limit: Annotated[PageLimit, Query()] = None,
    cursor: Annotated[PageCursor, Query()] = None,
) -> EntityReadback:
    timeline = readback.read_entity(deps, user_id, entity_id, limit=limit, cursor=cursor)
    return EntityReadback.from_domain(timeline)
