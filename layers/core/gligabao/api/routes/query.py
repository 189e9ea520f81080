"""POST /v1/gb/query: validate, call the memory core, answer."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.context_models import ContextResponse
from gligabao.api.deps import Invocation, invocation, memory
from gligabao.api.models import CONFIGURATION_INVALID, documented_responses
from gligabao.api.query_models import EvalQueryResponse, QueryRequest, QueryResponse
from gligabao.api.trajectory_models import EVAL_ROUTE_DESCRIPTION
from gligabao.bootstrap import Bundle
from gligabao.errors import BadRequest
from gligabao.memory import query
from gligabao.memory.retrieval_only import RetrievedContext

router = APIGatewayHttpRouter()

_ERRORS = {
    400: "invalid JSON body, unknown field, blank query, bad user_id, dataset, session_id, reasoning, models, "
    "geo fields or as_of; a model or reasoning level this deployment does not allow (GB_ALLOWED_MODELS, "
    "GB_MAX_REASONING)",
    404: "the dataset does not exist for this user",
    413: "the body is larger than the query limit (64 KiB by default)",
    502: "the LLM (query or detect_geo) or the embeddings call failed, the vector store could not be searched, "
    "or Amazon Location Service failed (geo resolver aws-location)",
    503: "a provider key is missing (ANTHROPIC_API_KEY or OPENAI_API_KEY), the database is unreachable, or "
    + CONFIGURATION_INVALID,
}


@router.post(
    "/v1/gb/query",
    tags=["query"],
    summary="Answer a question from the knowledge graph, with the evidence used (or only the context)",
    responses=documented_responses(
        'the answer and its evidence; with "answer": false, the retrieved context instead (no LLM call)',
        _ERRORS,
    ),
)
def post_query(
    request: Annotated[QueryRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
) -> QueryResponse | ContextResponse:
    result = _answer(request, deps, call)
    if isinstance(result, RetrievedContext):
        return ContextResponse.from_domain(result)
    return QueryResponse.from_domain(result)


@router.post(
    "/v1/gb/eval/query",
    tags=["query", "evals"],
    summary="Answer a question as an eval call: the answer, its trajectory and the trajectory's id",
    description=EVAL_ROUTE_DESCRIPTION,
    responses=documented_responses(
        "the answer and its evidence, with trajectory_id and trajectory",
        {**_ERRORS, 400: _ERRORS[400] + "; answer false (an eval call records an answer)"},
    ),
)
def post_eval_query(
    request: Annotated[QueryRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
) -> EvalQueryResponse:
    if request.answer is False:  # the body's own "eval": true is refused so too
        raise BadRequest("eval records the trajectory of an answer: it cannot be given with answer false")
    return EvalQueryResponse.from_answer(_answer(request.model_copy(update={"eval": True}), deps, call))


def _answer(request: QueryRequest, deps: Bundle, call: Invocation):
    if request.wants_geo and not deps.settings.geo:
        raise BadRequest("geo is not enabled on this server: geo_nearby and geo_radius_km need GB_GEO=on")
    question = request.question(call.request_id, call.deadline, default_radius_km=deps.settings.geo_radius_km)
    return query.answer(deps, question)
