"""POST /v1/gb/remember."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body, Header
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import Invocation, invocation, memory
from gligabao.api.models import CONFIGURATION_INVALID, documented_responses
from gligabao.api.remember_models import RememberRequest, RememberResponse
from gligabao.bootstrap import Bundle
from gligabao.memory.images import remember_image
from gligabao.memory.remember import remember_text

router = APIGatewayHttpRouter()

IDEMPOTENCY_KEY_DESCRIPTION = (
    "1 to 255 printable ASCII characters. A retry with the same key and body gets the first "
    "response (header Idempotent-Replayed: true) without running again; the key with another body, "
    "or while the first request runs, is 409. 5xx responses are not kept. Keys expire after "
    "GB_IDEMPOTENCY_TTL_SECONDS (default 24 hours)."
)

_ERRORS = {
    400: "invalid JSON body, unknown field, blank text, bad user_id, dataset, session_id, reference_time, "
    "reasoning, models, image or caption, or not exactly one of text and image; an image whose bytes "
    "are not its media_type (png, jpeg, gif or webp); a malformed Idempotency-Key",
    409: "the Idempotency-Key was used with another body, or its first request still runs (Retry-After)",
    413: "the body is larger than the remember limit (1 MiB by default for a text; for an image, its "
    "base64 and 64 KiB more), or the image is larger than 4 MiB decoded (GB_IMAGE_MAX_BYTES)",
    502: "the LLM or the embeddings call failed, or its reply was empty, truncated or unparseable; or Amazon "
    "Location Service failed (geo resolver aws-location)",
    503: "a provider key is missing (ANTHROPIC_API_KEY or OPENAI_API_KEY), the database or the idempotency "
    "records are unreachable, or " + CONFIGURATION_INVALID,
}


@router.post(
    "/v1/gb/remember",
    tags=["remember"],
    summary="Remember a text or an image: its entities and facts into the dataset's graph",
    responses=documented_responses("what was stored: entities, edges, superseded edges, chunks", _ERRORS),
)
def remember(
    request: Annotated[RememberRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
    # Served before routing (api/idempotency.py); declared here for the OpenAPI document.
    idempotency_key: Annotated[str | None, Header(description=IDEMPOTENCY_KEY_DESCRIPTION)] = None,
) -> RememberResponse:
    request.check_content()
    if request.image is not None:
        remembered = remember_image(
            deps, request.image_to_remember(), request_id=call.request_id, deadline=call.deadline
        )
        return RememberResponse.from_domain(remembered)
    remembered = remember_text(
        deps, request.text_to_remember(), request_id=call.request_id, deadline=call.deadline
    )
    return RememberResponse.from_domain(remembered)
