"""GET /v1/gb/graph: a page of the export of a dataset's graph, as JSON or GraphML; and the same
under the dataset, GET /v1/gb/datasets/{dataset}/graph (the gligabao server's route)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.graph_models import (
    GRAPHML_MEDIA_TYPE,
    NEXT_CURSOR_HEADER,
    Cursor,
    Format,
    GraphExport,
    IncludeExpired,
    Limit,
    graphml,
    json_body,
    response_bytes,
)
from gligabao.api.models import ErrorBody
from gligabao.api.validation import DEFAULT_DATASET, DatasetName, UserId
from gligabao.bootstrap import Bundle
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.graph_export import GraphPage, GraphRequest, export_page

router = APIGatewayHttpRouter()

_ERRORS = {
    400: "missing user_id, bad dataset name, include_expired, format, limit or cursor",
    404: "the dataset does not exist for this user",
    503: "the database is unreachable, or the configuration is invalid (the variable is named)",
}
_RENDER = {"json": (json_body, content_types.APPLICATION_JSON), "graphml": (graphml, GRAPHML_MEDIA_TYPE)}


_DESCRIPTION = (
    "Entities first (by name), then edges (in the order the graph learned them), with their ids"
    " and every time they carry; live edges only unless include_expired=true. At most `limit`"
    f" rows a page (default {DEFAULT_LIMITS.graph_page_rows}, at most {DEFAULT_LIMITS.graph_page_max_rows},"
    " fewer when the rows would not fit in one response); `next_cursor` (null on the last page;"
    f" with format=graphml, also the {NEXT_CURSOR_HEADER} header and the graph's next_cursor data)"
    " is the `cursor` of the next page. Each GraphML page is a document of its own: the export"
    " is the union of the pages' nodes and edges."
)
_RESPONSES = {
    200: {
        "description": "a page of the export",
        "content": {
            "application/json": {"model": GraphExport},
            GRAPHML_MEDIA_TYPE: {"schema": {"type": "string", "description": "a GraphML document"}},
        },
    },
    **{
        status: {"description": text, "content": {"application/json": {"model": ErrorBody}}}
        for status, text in _ERRORS.items()
    },
}


@router.get(
    "/v1/gb/graph",
    tags=["graph"],
    summary="Export a dataset's entities and edges, a page at a time",
    description=_DESCRIPTION,
    responses=_RESPONSES,
)
def get_graph(
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    dataset: Annotated[DatasetName, Query()] = DEFAULT_DATASET,
    include_expired: Annotated[IncludeExpired, Query(description="add the superseded edges")] = False,
    format: Annotated[Format, Query(description="json (default) or graphml")] = "json",
    limit: Annotated[Limit, Query(description="rows of the page")] = None,
    cursor: Annotated[Cursor, Query(description="the previous page's next_cursor")] = None,
):  # a Response of either media type: its 200 is declared in `responses`, not by an annotation
    return _export(deps, GraphRequest(user_id, dataset, include_expired, limit, cursor), format)


@router.get(
    "/v1/gb/datasets/<dataset>/graph",
    tags=["graph"],
    summary="Export a dataset's entities and edges, a page at a time (GET /v1/gb/graph?dataset=)",
    description=_DESCRIPTION + " The gligabao server's route: the dataset in the path.",
    responses=_RESPONSES,
)
def get_dataset_graph(
    dataset: Annotated[DatasetName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    include_expired: Annotated[IncludeExpired, Query(description="add the superseded edges")] = False,
    format: Annotated[Format, Query(description="json (default) or graphml")] = "json",
    limit: Annotated[Limit, Query(description="rows of the page")] = None,
    cursor: Annotated[Cursor, Query(description="the previous page's next_cursor")] = None,
):
    return _export(deps, GraphRequest(user_id, dataset, include_expired, limit, cursor), format)


def _export(deps: Bundle, request: GraphRequest, format: str) -> Response:
    render, media_type = _RENDER[format]
    bodies: list[str] = []

    def fits(page: GraphPage) -> bool:
        bodies.append(render(page))
        return response_bytes(bodies[-1]) <= deps.limits.graph_page_max_bytes

    page = export_page(deps, request, fits)
    headers = {NEXT_CURSOR_HEADER: page.next_cursor} if page.next_cursor and format == "graphml" else None
    return Response(200, media_type, bodies[-1], headers=headers)
