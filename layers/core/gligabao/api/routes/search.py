"""POST /v1/gb/search: the ranked context of a question with scores, no LLM call."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import Invocation, invocation, memory
from gligabao.api.models import CONFIGURATION_INVALID, documented_responses
from gligabao.api.search_models import SearchRequest, SearchResponse
from gligabao.bootstrap import Bundle
from gligabao.memory import search

router = APIGatewayHttpRouter()


@router.post(
    "/v1/gb/search",
    tags=["query"],
    summary="The entities, facts and passages most relevant to a question, scored, without an LLM call",
    description="The query route's retrieval and ranking, with `limit`, a similarity threshold and filters;"
    " one embeddings request. Unknown fields and unknown filter keys are a 400.",
    responses=documented_responses(
        "the scored lists, best first (nothing found: empty lists)",
        {
            400: "invalid JSON body, unknown field or filter key, blank query, bad user_id, dataset, limit, "
            "similarity_threshold or filter",
            404: "the dataset does not exist for this user",
            413: "the body is larger than the query limit (64 KiB by default)",
            502: "the embeddings call failed, or the vector store could not be searched",
            503: "OPENAI_API_KEY is missing, the database is unreachable, or " + CONFIGURATION_INVALID,
        },
    ),
)
def post_search(
    request: Annotated[SearchRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
) -> SearchResponse:
    return SearchResponse.from_domain(
        search.search(deps, request.search_query(call.request_id, call.deadline))
    )
