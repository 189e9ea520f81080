"""POST /v1/gb/remember."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import Invocation, invocation, memory
from gligabao.api.remember_models import RememberRequest, RememberResponse
from gligabao.bootstrap import Bundle
from gligabao.errors import NotImplementedYet
from gligabao.memory.remember import remember_text

router = APIGatewayHttpRouter()


@router.post(
    "/v1/gb/remember",
    tags=["remember"],
    summary="Remember a text: its entities and facts into the dataset's graph",
)
def remember(
    request: Annotated[RememberRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
) -> RememberResponse:
    request.check_content()
    if request.image is not None:
        raise NotImplementedYet("image remember is not implemented yet")
    remembered = remember_text(
        deps, request.text_to_remember(), request_id=call.request_id, deadline=call.deadline
    )
    return RememberResponse.from_domain(remembered)
