"""POST /v1/gb/remember."""

from __future__ import annotations

import time
from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.remember_models import RememberRequest, RememberResponse
from gligabao.errors import NotImplementedYet
from gligabao.memory.remember import TextToRemember, remember_text

router = APIGatewayHttpRouter()


@router.post(
    "/v1/gb/remember",
    tags=["remember"],
    summary="Remember a text: its entities and facts into the dataset's graph",
)
def remember(request: Annotated[RememberRequest, Body()]) -> RememberResponse:
    request.check_content()
    if request.image is not None:
        raise NotImplementedYet("image remember is not implemented yet")
    body = remember_text(
        TextToRemember(
            user_id=request.user_id,
            dataset=request.dataset,
            text=request.text,
            session_id=request.session_id,
            reference_time=request.reference_time,
            reasoning=request.reasoning,
            models=request.models,
        ),
        request_id=router.current_event.request_context.request_id,
        deadline=_deadline(),
    )
    return RememberResponse.model_validate(body)


def _deadline() -> float | None:
    """The Lambda's end as a time.monotonic() instant, for the model calls' timeouts."""
    context = getattr(router, "lambda_context", None)
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return time.monotonic() + remaining() / 1000 if callable(remaining) else None
