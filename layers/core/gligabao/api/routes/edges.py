"""Facts as a resource: GET /v1/gb/edges/{id} and GET /v1/gb/edges (served by the sessions
function, with the other read-backs)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.edges_models import EdgeList, EdgeResource, filters_from_query
from gligabao.api.models import database_route_responses
from gligabao.api.readback_models import PageCursor, PageLimit, RowId
from gligabao.api.validation import DatasetField, UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import edges

router = APIGatewayHttpRouter()

_LIST = "comma-separated values"


@router.get(
    "/v1/gb/edges/<edge_id>",
    tags=["read back"],
    summary="One fact with its provenance: artifacts, sessions, what superseded it and what it superseded",
    responses=database_route_responses(
        "the fact",
        {400: "a bad user_id or id", 404: "the user has no such fact (another user's id answers the same)"},
    ),
)
def get_edge(
    edge_id: Annotated[RowId, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
) -> EdgeResource:
    return EdgeResource.from_details(edges.read_edge(deps, user_id, edge_id))


@router.get(
    "/v1/gb/edges",
    tags=["read back"],
    summary="A dataset's facts, filtered as a search is, a page at a time",
    description="Live facts by id unless include_expired=true; the filters of POST /v1/gb/search as query "
    "parameters (lists comma-separated, metadata a JSON object). An unknown parameter is a 400.",
    responses=database_route_responses(
        "a page of facts",
        {
            400: "a bad user_id, dataset, filter, limit or cursor, or an unknown query parameter",
            404: "the dataset does not exist for this user",
        },
    ),
)
def list_edges(
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    dataset: Annotated[DatasetField, Query()] = "main",
    limit: Annotated[PageLimit, Query()] = None,
    cursor: Annotated[PageCursor, Query()] = None,
    entity_types: Annotated[str | None, Query(description=f"entity types, {_LIST}")] = None,
    relations: Annotated[str | None, Query(description=f"relations, {_LIST}")] = None,
    session_ids: Annotated[str | None, Query(description=f"session ids, {_LIST}")] = None,
    metadata: Annotated[str | None, Query(description="a JSON object: artifacts holding these pairs")] = None,
    valid_from: Annotated[str | None, Query(description="RFC 3339: facts still valid at or after it")] = None,
    valid_to: Annotated[str | None, Query(description="RFC 3339: facts valid before it")] = None,
    created_from: Annotated[str | None, Query(description="RFC 3339: learned at or after it")] = None,
    created_to: Annotated[str | None, Query(description="RFC 3339: learned before it")] = None,
    include_expired: Annotated[str | None, Query(description="true: superseded facts too")] = None,
) -> EdgeList:
    filters = filters_from_query(router.current_event.query_string_parameters or {})
    page = edges.list_edges(deps, user_id, dataset, filters, limit=limit, cursor=cursor)
    return EdgeList.from_domain(page)
