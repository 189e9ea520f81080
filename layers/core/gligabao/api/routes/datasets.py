"""GET /v1/gb/datasets and DELETE /v1/gb/datasets/{dataset}."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.models import DATABASE_UNAVAILABLE, DatasetDeleted, DatasetList, documented_responses
from gligabao.api.validation import DatasetName, UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import datasets

router = APIGatewayHttpRouter()


@router.get(
    "/v1/gb/datasets",
    tags=["datasets"],
    summary="The user's datasets with their counts",
    responses=documented_responses(
        "the user's datasets (none: an empty list)",
        {400: "a missing or bad user_id", 503: DATABASE_UNAVAILABLE},
    ),
)
def list_datasets(
    user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> DatasetList:
    return DatasetList.from_domain(datasets.list_datasets(deps, user_id))


@router.delete(
    "/v1/gb/datasets/<dataset>",
    tags=["datasets"],
    summary="Delete a dataset and everything in it, vectors included",
    responses=documented_responses(
        "the dataset was deleted",
        {
            400: "a missing or bad user_id, or a bad dataset name",
            404: "the dataset does not exist for this user",
            503: DATABASE_UNAVAILABLE,
        },
    ),
)
def delete_dataset(
    dataset: Annotated[DatasetName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
) -> DatasetDeleted:
    datasets.delete_dataset(deps, user_id, dataset)
    return DatasetDeleted(dataset=dataset, deleted=True)
