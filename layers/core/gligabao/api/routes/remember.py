"""POST /v1/gb/remember."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.invocation import deadline, request_id
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
        request_id=request_id(router),
        deadline=deadline(router),
    )
    return RememberResponse.model_validate(body)
