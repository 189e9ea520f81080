"""Timeseries as a resource: POST /v1/gb/timeseries (the reference client's attach_timeseries),
GET /v1/gb/timeseries (a dataset's series), GET /v1/gb/timeseries/{id} (one series with its points
in a range) and GET /v1/gb/entities/{id}/timeseries (an entity's). Served by the sessions function,
with the other read-backs."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BeforeValidator, WithJsonSchema

from gligabao.api.app import body_size
from gligabao.api.deps import memory
from gligabao.api.models import database_route_responses
from gligabao.api.readback_models import PageCursor, PageLimit, RowId
from gligabao.api.timeseries_models import (
    AttachRequest,
    AttachResponse,
    EntitySeriesOut,
    SeriesListOut,
    SeriesPointsOut,
)
from gligabao.api.validation import TIME_PATTERN, DatasetField, UserId, rfc3339_time
from gligabao.bootstrap import Bundle
from gligabao.errors import PayloadTooLarge
from gligabao.memory import timeseries

router = APIGatewayHttpRouter()


def _bound(name: str):
    """A range's bound as given, once it is seen to be a time (the route reads it)."""

    def checked(value: object) -> object:
        rfc3339_time(value, name)
        return value

    return checked


def _points_limit(value: object) -> object:
    if value is None:
        return None
    text = value.strip() if isinstance(value, str) else ""
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= timeseries.POINTS_MAX:
        raise ValueError(f"limit must be between 1 and {timeseries.POINTS_MAX}")
    return int(text)


_BOUND = "RFC 3339 with an offset"
From = Annotated[
    str | None, BeforeValidator(_bound("from")), WithJsonSchema({"type": "string", "pattern": TIME_PATTERN})
]
To = Annotated[
    str | None, BeforeValidator(_bound("to")), WithJsonSchema({"type": "string", "pattern": TIME_PATTERN})
]
PointsLimit = Annotated[
    int | None,
    BeforeValidator(_points_limit),
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer", "minimum": 1, "maximum": timeseries.POINTS_MAX}, {"type": "null"}],
            "description": f"points at most, earliest first: default {timeseries.POINTS_DEFAULT}, at most "
            f"{timeseries.POINTS_MAX}",
        }
    ),
]


@router.post(
    "/v1/gb/timeseries",
    tags=["timeseries"],
    summary="Store series of [time, value] points in an existing dataset, anchored to what they are about",
    description="A series with the key and field of a stored one adds its points (a time it holds takes "
    "the new value) and its anchors. Anchors name what exists: `entity_id`, `edge_id`, `artifact_id`, an "
    "entity selector `{name, type}` or an edge selector `{source, relation, target}` (a live fact), each "
    "with an optional `role` and `window`; one that names nothing is a 400 naming it. The whole request is "
    "one transaction: a 400 writes nothing. No model is called.",
    responses=database_route_responses(
        "the series as stored, with their statistics",
        {
            400: "invalid JSON body, unknown field, bad user_id or dataset, a bad series (key, name, unit, "
            "a point's time or value, an anchor), more series, points or anchors than the limits allow "
            "(GB_MAX_SERIES_PER_REQUEST, GB_MAX_POINTS_PER_SERIES, GB_MAX_ANCHORS_PER_SERIES), a series "
            "without anchors, or an anchor naming nothing of the dataset",
            404: "the dataset does not exist for this user (it is not created here)",
            413: "the body is larger than GB_TIMESERIES_MAX_BODY_BYTES (5 MiB by default)",
        },
    ),
)
def post_timeseries(
    request: Annotated[AttachRequest, Body()], deps: Annotated[Bundle, Depends(memory)]
) -> AttachResponse:
    most = deps.limits.timeseries_max_body_bytes
    if body_size(router.current_event.raw_event) > most:
        raise PayloadTooLarge(f"request body is larger than {most} bytes")
    attached = timeseries.attach(deps, request.user_id, request.dataset, request.domain())
    return AttachResponse.from_domain(request.user_id, attached)


@router.get(
    "/v1/gb/timeseries",
    tags=["timeseries"],
    summary="A dataset's series with their statistics and anchors, a page at a time",
    description="By id, without their points; at most `limit` a page (default GB_READBACK_PAGE_DEFAULT, "
    "at most GB_READBACK_PAGE_MAX), with `next_cursor` while more remain.",
    responses=database_route_responses(
        "a page of series (none: an empty list)",
        {
            400: "a missing or bad user_id, a bad dataset, limit or cursor",
            404: "the dataset does not exist for this user",
        },
    ),
)
def list_timeseries(
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    dataset: Annotated[DatasetField, Query()] = "main",
    limit: Annotated[PageLimit, Query()] = None,
    cursor: Annotated[PageCursor, Query()] = None,
) -> SeriesListOut:
    return SeriesListOut.from_domain(
        timeseries.list_series(deps, user_id, dataset, limit=limit, cursor=cursor)
    )


@router.get(
    "/v1/gb/timeseries/<series_id>",
    tags=["timeseries"],
    summary="One series with its points in a range and their statistics",
    description="The points in [from, to], both included (each bound optional), earliest first, at most `limit` "
    "(`truncated` when more remain); `stats` are of every point, `window_stats` (with from or to) of "
    "those in the range.",
    responses=database_route_responses(
        "the series and its points",
        {
            400: "a missing or bad user_id, a bad id, from, to or limit",
            404: "the user has no such series (another user's id answers the same)",
        },
    ),
)
def get_timeseries(
    series_id: Annotated[RowId, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    start: Annotated[From, Query(alias="from", description=f"{_BOUND}: points at or after it")] = None,
    end: Annotated[To, Query(alias="to", description=f"{_BOUND}: points before it")] = None,
    limit: Annotated[PointsLimit, Query()] = None,
) -> SeriesPointsOut:
    found = timeseries.read_series(
        deps,
        user_id,
        series_id,
        start=rfc3339_time(start),
        end=rfc3339_time(end),
        limit=limit,
    )
    return SeriesPointsOut.from_domain(found)


@router.get(
    "/v1/gb/entities/<entity_id>/timeseries",
    tags=["timeseries"],
    summary="The series anchored to an entity or to one of its facts, a page at a time",
    responses=database_route_responses(
        "a page of the entity's series (none: an empty list)",
        {
            400: "a missing or bad user_id, a bad id, limit or cursor",
            404: "the user has no such entity (another user's id answers the same)",
        },
    ),
)
def get_entity_timeseries(
    entity_id: Annotated[RowId, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    limit: Annotated[PageLimit, Query()] = None,
    cursor: Annotated[PageCursor, Query()] = None,
) -> EntitySeriesOut:
    page = timeseries.entity_series(deps, user_id, entity_id, limit=limit, cursor=cursor)
    return EntitySeriesOut.from_domain(page)
