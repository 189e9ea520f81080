"""PATCH /v1/gb/edges/{id}: correct a fact by hand (memory/corrections.py)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.correction_models import CorrectionRequest, CorrectionResponse
from gligabao.api.deps import Invocation, invocation, memory
from gligabao.api.forget_models import MAX_ID
from gligabao.api.models import DATABASE_UNAVAILABLE, documented_responses
from gligabao.bootstrap import Bundle
from gligabao.memory import corrections

router = APIGatewayHttpRouter()

_ERRORS = {
    400: "invalid JSON, an unknown field, user_id missing or invalid, nothing to change, a change that "
    "changes nothing, invalid_at before valid_at, a target id not in the fact's dataset",
    404: "no such edge among the user's datasets (another user's answers the same)",
    409: "the edge was already superseded (correct the fact that superseded it), or the "
    "Idempotency-Key was used with another body or its first request still runs",
    502: "the embeddings call failed",
    503: f"{DATABASE_UNAVAILABLE}, or the embeddings provider's key is missing",
}


@router.patch(
    "/v1/gb/edges/<edge_id>",
    tags=["correct"],
    summary="Correct a fact: supersede it with the values given, or end it (invalid_at alone)",
    description="The stored edge is expired now and a new edge holds the corrected fact, stated by an "
    "artifact of kind correction that records who asked and the previous values. With only "
    "`invalid_at`, the edge ends then without a replacement. No LLM call; one embeddings request when "
    "the description or the target changes. An Idempotency-Key header makes a retry replay the first "
    "response.",
    responses=documented_responses("the fact as it now stands, and what the correction superseded", _ERRORS),
)
def correct_edge(
    edge_id: Annotated[int, Path(ge=1, le=MAX_ID)],
    body: Annotated[CorrectionRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
) -> CorrectionResponse:
    corrected = corrections.correct(
        deps, body.correction(edge_id), request_id=call.request_id, deadline=call.deadline
    )
    return CorrectionResponse.from_domain(corrected)
