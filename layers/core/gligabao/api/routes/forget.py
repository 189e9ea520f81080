"""DELETE /v1/gb/artifacts/{id}, /v1/gb/entities/{id} and /v1/gb/edges/{id}: forget; DELETE
/v1/gb/users/{user_id}: erase a user."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.request import Request
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import AfterValidator

from gligabao.api.auth import token_subject
from gligabao.api.deps import memory
from gligabao.api.forget_models import MAX_ID, ErasureReceipt, ForgetResponse
from gligabao.api.models import DATABASE_UNAVAILABLE, documented_responses
from gligabao.api.validation import UserId, check_user_id
from gligabao.bootstrap import Bundle
from gligabao.errors import BadRequest, Forbidden
from gligabao.memory import erasure, forget

router = APIGatewayHttpRouter()

RowId = Annotated[int, Path(ge=1, le=MAX_ID)]
# The user in a path arrives percent-encoded (any character may be in a user id): decoded, then
# held to the user_id rule of every route.
PathUserId = Annotated[str, AfterValidator(lambda value: check_user_id(unquote(value)))]


def _responses(kind: str, more: dict[int, str] | None = None) -> dict:
    errors = {
        400: "user_id missing or invalid, or the id is not a positive integer",
        404: f"no such {kind} among the user's datasets (another user's answers the same)",
        503: "the database is unavailable",
        **(more or {}),
    }
    return documented_responses("what was deleted", errors)


@router.delete(
    "/v1/gb/artifacts/<artifact_id>",
    tags=["forget"],
    summary="Forget a remembered text: its chunks, and the entities and facts only it supports",
    responses=_responses("artifact", {409: "the id is a chunk's: a chunk is forgotten with its text"}),
)
def forget_artifact(
    artifact_id: RowId, user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> ForgetResponse:
    return ForgetResponse.from_domain(forget.forget_artifact(deps, user_id, artifact_id))


@router.delete(
    "/v1/gb/entities/<entity_id>",
    tags=["forget"],
    summary="Forget an entity and every fact about it",
    responses=_responses("entity"),
)
def forget_entity(
    entity_id: RowId, user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> ForgetResponse:
    return ForgetResponse.from_domain(forget.forget_entity(deps, user_id, entity_id))


@router.delete(
    "/v1/gb/edges/<edge_id>",
    tags=["forget"],
    summary="Forget a fact",
    responses=_responses("edge"),
)
def forget_edge(
    edge_id: RowId, user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> ForgetResponse:
    return ForgetResponse.from_domain(forget.forget_edge(deps, user_id, edge_id))


@router.delete(
    "/v1/gb/users/<user_id>",
    tags=["forget"],
    summary="Erase a user: every row of the user in every table, in one transaction, with a receipt",
    description="Datasets and everything in them (artifacts, images, entities, facts, links, "
    "trajectories, queued jobs, which are cancelled: a worker holding one makes no model call and writes "
    "nothing after it), the user's inferences and idempotency records. Under jwt, only the token's own "
    "subject may be erased. The answer is a receipt (rows erased per table, jobs cancelled, when), logged "
    "with a digest of the user's id. Erasing a user with nothing stored answers a receipt of nothing.",
    responses=documented_responses(
        "the receipt: what was erased",
        {
            400: "the user_id in the path is invalid, or the query string's user_id names another user",
            503: DATABASE_UNAVAILABLE,
        },
    ),
)
def erase_user(
    user_id: Annotated[PathUserId, Path()], request: Request, deps: Annotated[Bundle, Depends(memory)]
) -> ErasureReceipt:
    _check_caller(user_id, request)
    return ErasureReceipt.from_domain(erasure.erase_user(deps, user_id), erasure.user_digest(user_id))


def _check_caller(user_id: str, request: Request) -> None:
    """The user in the path is the one the request speaks for: the token's subject under jwt
    (api/auth.py fills the query string's user_id with it), else the query string's user_id when
    one is given."""
    subject = token_subject(request.resolved_event.raw_event)
    if subject is not None and subject != user_id:
        raise Forbidden("forbidden: only the authenticated user can be erased")
    named = request.query_parameters.get("user_id") if request.query_parameters else None
    if named is not None and named != user_id:
        raise BadRequest("user_id in the query string names another user than the path")
