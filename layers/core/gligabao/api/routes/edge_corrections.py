"""PATCH /v1/gb/edges/{id}: correct a fact by hand; POST /v1/gb/edges/{id}/restore: make a superseded
fact hold again (memory/corrections.py)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.correction_models import (
    CorrectionRequest,
    CorrectionResponse,
    RestoreRequest,
    RestoreResponse,
    user_of,
)
from gligabao.api.deps import Invocation, invocation, memory
from gligabao.api.forget_models import MAX_ID
from gligabao.api.models import DATABASE_UNAVAILABLE, documented_responses
from gligabao.api.validation import UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import corrections

router = APIGatewayHttpRouter()

_ERRORS = {
    400: "invalid JSON, an unknown field, user_id missing or invalid (or two different ones in the query "
    "string and the body), nothing to change, a change that changes nothing, invalid_at before valid_at, a "
    "target id not in the fact's dataset",
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
    description="The stored edge is superseded now (emptied: its period ends where it began) and a new "
    "edge holds the corrected fact, stated by an artifact of kind correction that records who asked and "
    "the previous values; a new target or relation without a new description gets a sentence naming the "
    "new ends. With only `invalid_at`, the edge ends then without a replacement. `user_id` in the query "
    "string or the body. No LLM call; one embeddings request when the description, target or relation "
    "changes. An Idempotency-Key header makes a retry replay the first response.",
    responses=documented_responses("the fact as it now stands, and what the correction superseded", _ERRORS),
)
def correct_edge(
    edge_id: Annotated[int, Path(ge=1, le=MAX_ID)],
    body: Annotated[CorrectionRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
    user_id: Annotated[UserId | None, Query()] = None,
) -> CorrectionResponse:
    correction = body.correction(edge_id, user_of(user_id, body.user_id))
    corrected = corrections.correct(deps, correction, request_id=call.request_id, deadline=call.deadline)
    return CorrectionResponse.from_domain(corrected)


@router.post(
    "/v1/gb/edges/<edge_id>/restore",
    tags=["correct"],
    summary="Restore a superseded fact: it holds again, and the fact that superseded it ends or is kept",
    description="Undoes a wrong supersession in one call: the fact holds again over the period its texts "
    "gave, as if said now. With `superseder: end` the fact that superseded it ends where the restored one "
    "begins; with `keep` the two are recorded as not contradicting and both hold. Recorded as an artifact "
    "of kind correction (who asked, why, what had superseded it), shown in the fact's provenance and "
    "history. No model call.",
    responses=documented_responses(
        "the fact restored and the one that had superseded it, as they now stand",
        {
            400: "invalid JSON, an unknown field, user_id missing or invalid (or two different ones), "
            "superseder missing or not end or keep",
            404: "no such edge among the user's datasets (another user's answers the same)",
            409: "the edge is not superseded",
            503: DATABASE_UNAVAILABLE,
        },
    ),
)
def restore_edge(
    edge_id: Annotated[int, Path(ge=1, le=MAX_ID)],
    body: Annotated[RestoreRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    user_id: Annotated[UserId | None, Query()] = None,
) -> RestoreResponse:
    restored = corrections.restore(deps, body.restore(edge_id, user_of(user_id, body.user_id)))
    return RestoreResponse.from_domain(restored)
