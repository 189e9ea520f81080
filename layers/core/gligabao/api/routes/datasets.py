"""GET /v1/gb/datasets and DELETE /v1/gb/datasets/{dataset}."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.models import DatasetDeleted, DatasetList
from gligabao.api.validation import DatasetName, UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import datasets

router = APIGatewayHttpRouter()


@router.get("/v1/gb/datasets", tags=["datasets"], summary="The user's datasets with their counts")
def list_datasets(
    user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> DatasetList:
    return DatasetList.from_domain(datasets.list_datasets(deps, user_id))


@router.delete(
    "/v1/gb/datasets/<dataset>",
    tags=["datasets"],
    summary="Delete a dataset and everything in it, vectors included",
)
def delete_dataset(
    dataset: Annotated[DatasetName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
) -> DatasetDeleted:
    datasets.delete_dataset(deps, user_id, dataset)
    return DatasetDeleted(dataset=dataset, deleted=True)
