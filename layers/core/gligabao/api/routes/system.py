"""GET /v1/gb/health and GET /v1/gb/openapi.json."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.models import Health
from gligabao.memory.health import health as service_health

router = APIGatewayHttpRouter()


@router.get("/v1/gb/health", tags=["system"], summary="Database state and configured providers")
def health() -> Health:
    return Health.model_validate(service_health())


@router.get(
    "/v1/gb/openapi.json", tags=["system"], summary="This API's OpenAPI document", include_in_schema=False
)
def openapi() -> dict:
    from gligabao.api.app import openapi_document
    from gligabao.api.routes import all_routers

    return openapi_document(all_routers())
