"""GET /v1/gb/datasets and DELETE /v1/gb/datasets/{dataset}."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.models import DatasetDeleted, DatasetList
from gligabao.api.validation import DatasetName, UserId
from gligabao.memory import datasets

router = APIGatewayHttpRouter()


@router.get("/v1/gb/datasets", tags=["datasets"], summary="The user's datasets with their counts")
def list_datasets(user_id: Annotated[UserId, Query()]) -> DatasetList:
    return DatasetList.model_validate({"datasets": datasets.list_datasets(user_id)})


@router.delete(
    "/v1/gb/datasets/<dataset>",
    tags=["datasets"],
    summary="Delete a dataset and everything in it, vectors included",
)
def delete_dataset(
    dataset: Annotated[DatasetName, Path()], user_id: Annotated[UserId, Query()]
) -> DatasetDeleted:
    datasets.delete_dataset(user_id, dataset)
    return DatasetDeleted(dataset=dataset, deleted=True)
