"""GET /v1/gb/health. (GET /v1/gb/openapi.json is answered by the handler: api/handler.py.)"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.models import CONFIGURATION_INVALID, Health, documented_responses
from gligabao.bootstrap import Bundle
from gligabao.memory.health import health as service_health

router = APIGatewayHttpRouter()


@router.get(
    "/v1/gb/health",
    tags=["system"],
    summary="Database state and configured providers",
    responses=documented_responses(
        "the database state (an unreachable one included) and the providers configured",
        {503: CONFIGURATION_INVALID},
    ),
)
def health(deps: Annotated[Bundle, Depends(memory)]) -> Health:
    state = service_health(
        deps.database,
        llm_configured=deps.keys.llm_configured(),
        embeddings_configured=deps.keys.embeddings_configured(),
        llm_provider=deps.settings.llm_provider,
        embedding_provider=deps.settings.embedding_provider,
    )
    return Health.from_domain(state)
