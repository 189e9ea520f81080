"""POST /v1/gb/remember."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import Invocation, invocation, memory
from gligabao.api.idempotency import IDEMPOTENCY_KEY_DESCRIPTION
from gligabao.api.models import CONFIGURATION_INVALID, documented_responses
from gligabao.api.remember_models import (
    AcceptedResponse,
    BatchAcceptedResponse,
    BatchRememberRequest,
    EvalRememberResponse,
    RememberRequest,
    RememberResponse,
)
from gligabao.api.trajectory_models import EVAL_ROUTE_DESCRIPTION
from gligabao.bootstrap import Bundle
from gligabao.memory import async_remember
from gligabao.memory.async_remember import QueuedText
from gligabao.memory.derived import remember_text_and_more
from gligabao.memory.facts import remember_facts
from gligabao.memory.images import remember_image
from gligabao.memory.remember import Remembered, remember_text

router = APIGatewayHttpRouter()


_ERRORS = {
    400: "invalid JSON body, unknown field, blank text, bad user_id, dataset, session_id, reference_time, "
    "reasoning, models, image or caption, a model or reasoning level this deployment does not allow "
    "(GB_ALLOWED_MODELS, GB_MAX_REASONING), or not exactly one of text, image and facts; an image whose bytes "
    "are not its media_type (png, jpeg, gif or webp); facts with an edge naming no listed entity, an empty "
    "name, a bad time or more entities or edges than GB_FACTS_MAX_ENTITIES or GB_FACTS_MAX_EDGES; a "
    "malformed Idempotency-Key",
    409: "the Idempotency-Key was used with another body, or its first request still runs (Retry-After)",
    413: "the body is larger than the remember limit (1 MiB by default for a text; for an image, its "
    "base64 and 64 KiB more), or the image is larger than 4 MiB decoded (GB_IMAGE_MAX_BYTES)",
    502: "the LLM or the embeddings call failed, or its reply was empty, truncated or unparseable; or Amazon "
    "Location Service failed (geo resolver aws-location)",
    503: "a provider key is missing (ANTHROPIC_API_KEY or OPENAI_API_KEY), the database or the idempotency "
    "records are unreachable, the job queue is not configured (GB_JOBS_QUEUE_URL) or unavailable "
    "(asynchronous remember), or " + CONFIGURATION_INVALID,
}
_ACCEPTED = {
    202: {
        "description": 'asynchronous remember ("async": true, or a text longer than '
        "GB_ASYNC_REMEMBER_THRESHOLD_CHARS): the artifact is pending, GET /v1/gb/artifacts/{id} shows its "
        "status (pending, running, done, failed with its error)",
        "content": {"application/json": {"model": AcceptedResponse}},
    }
}
_BATCH_ERRORS = {
    400: "invalid JSON body, unknown field, no texts or more than GB_BATCH_REMEMBER_MAX_TEXTS (100), a blank "
    "text, bad user_id, dataset, session_id, reference_time, reasoning or models, a model or reasoning level "
    "this deployment does not allow (GB_ALLOWED_MODELS, GB_MAX_REASONING); a malformed Idempotency-Key",
    409: _ERRORS[409],
    413: _ERRORS[413],
    503: "the job queue is not configured (GB_JOBS_QUEUE_URL) or unavailable, the database is unreachable, "
    "or " + CONFIGURATION_INVALID,
}


@router.post(
    "/v1/gb/remember",
    tags=["remember"],
    summary="Remember a text, an image or facts: their entities and facts into the dataset's graph",
    responses={
        **documented_responses("what was stored: entities, edges, superseded edges, chunks", _ERRORS),
        200: {
            "description": "what was stored: entities, edges, superseded edges, chunks",
            "content": {"application/json": {"model": RememberResponse}},
        },
        **_ACCEPTED,
    },
)
def remember(
    request: Annotated[RememberRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
    # Served before routing (api/idempotency.py); declared here for the OpenAPI document.
    idempotency_key: Annotated[str | None, Header(description=IDEMPOTENCY_KEY_DESCRIPTION)] = None,
) -> RememberResponse | AcceptedResponse:  # the 202's body is validated too
    remembered = _remember(request, deps, call)
    if isinstance(remembered, Response):
        return remembered
    return RememberResponse.from_domain(remembered, kind=_kind(request))


@router.post(
    "/v1/gb/eval/remember",
    tags=["remember", "evals"],
    summary="Remember a text or an image as an eval call: what was stored, its trajectory and its id",
    description=EVAL_ROUTE_DESCRIPTION
    + " Asynchronous (202), the trajectory is stored with the job's transaction: GET "
    "/v1/gb/trajectories?user_id=&dataset=&artifact_id= finds it once the artifact is done.",
    responses={
        **documented_responses(
            "what was stored, with trajectory_id and trajectory",
            {**_ERRORS, 400: _ERRORS[400] + "; facts (trajectories are recorded for texts and images)"},
        ),
        200: {
            "description": "what was stored, with trajectory_id and trajectory",
            "content": {"application/json": {"model": EvalRememberResponse}},
        },
        **_ACCEPTED,
    },
)
def eval_remember(
    request: Annotated[RememberRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    call: Annotated[Invocation, Depends(invocation)],
    idempotency_key: Annotated[str | None, Header(description=IDEMPOTENCY_KEY_DESCRIPTION)] = None,
) -> EvalRememberResponse | AcceptedResponse:
    request = request.model_copy(update={"eval": True})
    remembered = _remember(request, deps, call)
    if isinstance(remembered, Response):
        return remembered
    return EvalRememberResponse.from_remembered(remembered, kind=_kind(request))


def _remember(request: RememberRequest, deps: Bundle, call: Invocation) -> Remembered | Response:
    """What a text, an image or facts stored; the 202 when they are queued instead."""
    request.check_content(deps.limits)
    if request.facts is not None:
        if request.run_async:
            return _accept_one(request, deps, request.queued())
        return remember_facts(
            deps, request.facts_to_remember(), request_id=call.request_id, deadline=call.deadline
        )
    if request.image is not None:
        return remember_image(
            deps, request.image_to_remember(), request_id=call.request_id, deadline=call.deadline
        )
    if request.runs_async(deps.limits):
        return _accept_one(request, deps, request.queued())
    if request.timeseries is None and not request.web_search:
        return remember_text(
            deps, request.text_to_remember(), request_id=call.request_id, deadline=call.deadline
        )
    asked = request.timeseries
    fetch = asked.fetch if asked is not None else None
    return remember_text_and_more(
        deps,
        request.text_to_remember(),
        observe=asked is not None and asked.observations,
        fetch=fetch is not None,
        fetch_providers=fetch.providers if fetch is not None else None,
        **(fetch.spans() if fetch is not None else {}),
        web_search=request.web_search,
        request_id=call.request_id,
        deadline=call.deadline,
    )


def _kind(request: RememberRequest) -> str | None:
    """knowledge or episode: a text's or facts'; an image has none."""
    return request.memory_kind if request.image is None else None


@router.post(
    "/v1/gb/remember/batch",
    tags=["remember"],
    summary="Remember up to 100 texts asynchronously, applied in order of reference_time",
    responses={
        202: {
            "description": "every text is a pending artifact, queued; in the dataset they are applied one "
            "at a time in order of reference_time",
            "content": {"application/json": {"model": BatchAcceptedResponse}},
        },
        **{k: v for k, v in documented_responses("", _BATCH_ERRORS).items() if k != 200},
    },
)
def remember_batch(
    request: Annotated[BatchRememberRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    idempotency_key: Annotated[str | None, Header(description=IDEMPOTENCY_KEY_DESCRIPTION)] = None,
) -> BatchAcceptedResponse:  # answered with 202
    request.check_size(deps.limits)
    _providers_configured(deps)
    ids = async_remember.accept(
        deps,
        deps.jobs,
        user_id=request.user_id,
        dataset=request.dataset,
        texts=[text.queued(request.metadata) for text in request.texts],
        reasoning=request.reasoning,
        models=request.models,
        eval=request.eval,
    )
    return _accepted(
        BatchAcceptedResponse(
            dataset=request.dataset,
            artifacts=[AcceptedResponse(artifact_id=artifact_id, status="pending") for artifact_id in ids],
        )
    )


def _accept_one(request: RememberRequest, deps: Bundle, queued: QueuedText) -> Response:
    """One text (or facts) queued as a pending artifact: 202."""
    _providers_configured(deps)
    [artifact_id] = async_remember.accept(
        deps,
        deps.jobs,
        user_id=request.user_id,
        dataset=request.dataset,
        texts=[queued],
        reasoning=request.reasoning,
        models=request.models,
        eval=request.eval,
    )
    return _accepted(AcceptedResponse(artifact_id=artifact_id, status="pending"))


def _providers_configured(deps: Bundle) -> None:
    """A missing provider key is the same 503 as a synchronous remember's, before anything is
    queued: the worker (which has the same keys) could only fail the job after its retries."""
    deps.llm, deps.embedder, deps.geo  # noqa: B018 - obtaining each client checks its configuration


def _accepted(body: AcceptedResponse | BatchAcceptedResponse) -> Response:
    return Response(202, "application/json", body)
