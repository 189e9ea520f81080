"""GET /v1/gb/datasets and DELETE /v1/gb/datasets/{dataset}.

The delete answers 204 without a body, as the gligabao server's does (a 200 with
{"dataset": ..., "deleted": true} before).
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.models import DATABASE_UNAVAILABLE, DatasetList, documented_responses
from gligabao.api.readback_models import PageCursor, PageLimit
from gligabao.api.validation import DatasetName, UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import datasets

router = APIGatewayHttpRouter()


@router.get(
    "/v1/gb/datasets",
    tags=["datasets"],
    summary="The user's datasets with their counts, a page at a time",
    description="By name; at most `limit` a page (default and most GB_READBACK_PAGE_MAX, 500), with "
    "`next_cursor` while more remain (null on the last page, as for every user with fewer).",
    responses=documented_responses(
        "a page of the user's datasets (none: an empty list)",
        {400: "a missing or bad user_id, limit or cursor", 503: DATABASE_UNAVAILABLE},
    ),
)
def list_datasets(
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
    limit: Annotated[PageLimit, Query()] = None,
    cursor: Annotated[PageCursor, Query()] = None,
) -> DatasetList:
    page = datasets.dataset_page(deps, user_id, limit=limit, cursor=cursor)
    return DatasetList.from_domain(page.datasets, page.next_cursor)


@router.delete(
    "/v1/gb/datasets/<dataset>",
    tags=["datasets"],
    summary="Delete a dataset and everything in it, vectors included",
    responses={
        204: {"description": "the dataset was deleted (no body)"},
        **{
            status: response
            for status, response in documented_responses(
                "",
                {
                    400: "a missing or bad user_id, or a bad dataset name",
                    404: "the dataset does not exist for this user",
                    503: DATABASE_UNAVAILABLE,
                },
            ).items()
            if status != 200
        },
    },
)
def delete_dataset(
    dataset: Annotated[DatasetName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
):  # a Response without a body: its 204 is declared in `responses`, not by an annotation
    datasets.delete_dataset(deps, user_id, dataset)
    return Response(204)
