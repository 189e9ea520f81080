"""The ontology routes: /v1/gb/ontologies (create, list), /v1/gb/ontologies/{name} (read, replace,
delete) and /v1/gb/datasets/{dataset}/ontology (read, attach, detach). Served by the datasets
function; a POST with an Idempotency-Key runs once (api/idempotency.py)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.api.deps import memory
from gligabao.api.idempotency import IDEMPOTENCY_KEY_DESCRIPTION
from gligabao.api.models import database_route_responses
from gligabao.api.ontology_models import (
    AttachOntologyRequest,
    CreateOntologyRequest,
    DatasetOntology,
    OntologyList,
    OntologyName,
    OntologyResponse,
    ReplaceOntologyRequest,
)
from gligabao.api.validation import DatasetName, UserId
from gligabao.bootstrap import Bundle
from gligabao.memory import ontologies

router = APIGatewayHttpRouter()

_BODY_ERRORS = (
    "invalid JSON body, unknown field, bad user_id, name or dataset, not exactly one of content and "
    "entity_types, a document that is not well-formed XML or not OWL in RDF/XML, an external DTD, "
    "external, parameter or nested entities, an RDF list that loops, a class or property whose name, "
    "labels or comment break the JSON form's rules (lengths, counts, control characters), a domain, "
    "range or parent naming no declared type, more types than GB_ONTOLOGY_MAX_TYPES"
)
_TOO_LARGE = "the document (or the JSON form) is larger than GB_ONTOLOGY_MAX_BYTES (512 KiB)"


@router.post(
    "/v1/gb/ontologies",
    tags=["ontologies"],
    summary="Register an ontology (OWL RDF/XML or the JSON form), attached to a dataset if one is named",
    responses={
        201: {
            "description": "the ontology as stored",
            "content": {"application/json": {"model": OntologyResponse}},
        },
        **{
            status: response
            for status, response in database_route_responses(
                "",
                {
                    400: _BODY_ERRORS + "; a malformed Idempotency-Key",
                    409: "the user has an ontology of that name (PUT replaces it), or the Idempotency-Key "
                    "was used with another body",
                    413: _TOO_LARGE,
                },
            ).items()
            if status != 200
        },
    },
)
def create_ontology(
    request: Annotated[CreateOntologyRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
    idempotency_key: Annotated[str | None, Header(description=IDEMPOTENCY_KEY_DESCRIPTION)] = None,
):  # a 201: declared in `responses`
    document = request.document(request.name, deps.limits)
    stored = ontologies.create(deps, request.user_id, document, request.dataset)
    return Response(201, "application/json", OntologyResponse.from_domain(stored).model_dump_json())


@router.get(
    "/v1/gb/ontologies",
    tags=["ontologies"],
    summary="The user's ontologies",
    responses=database_route_responses("the user's ontologies (none: an empty list)", {400: "a bad user_id"}),
)
def list_ontologies(
    user_id: Annotated[UserId, Query()], deps: Annotated[Bundle, Depends(memory)]
) -> OntologyList:
    return OntologyList.from_domain(ontologies.list_ontologies(deps, user_id))


@router.get(
    "/v1/gb/ontologies/<name>",
    tags=["ontologies"],
    summary="One ontology: its types, relations, setting, document and datasets",
    responses=database_route_responses(
        "the ontology", {400: "a bad user_id or name", 404: "the user has no ontology of that name"}
    ),
)
def get_ontology(
    name: Annotated[OntologyName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
) -> OntologyResponse:
    return OntologyResponse.from_domain(ontologies.get(deps, user_id, name))


@router.put(
    "/v1/gb/ontologies/<name>",
    tags=["ontologies"],
    summary="Replace an ontology's document and setting (its datasets stay attached)",
    responses=database_route_responses(
        "the ontology as stored",
        {400: _BODY_ERRORS, 404: "the user has no ontology of that name", 413: _TOO_LARGE},
    ),
)
def replace_ontology(
    name: Annotated[OntologyName, Path()],
    request: Annotated[ReplaceOntologyRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
) -> OntologyResponse:
    document = request.document(name, deps.limits)
    return OntologyResponse.from_domain(ontologies.replace(deps, request.user_id, document))


@router.delete(
    "/v1/gb/ontologies/<name>",
    tags=["ontologies"],
    summary="Delete an ontology attached to no dataset",
    responses={
        204: {"description": "deleted (no body)"},
        **{
            status: response
            for status, response in database_route_responses(
                "",
                {
                    400: "a bad user_id or name",
                    404: "the user has no ontology of that name",
                    409: "the ontology is attached to datasets (named): detach it first",
                },
            ).items()
            if status != 200
        },
    },
)
def delete_ontology(
    name: Annotated[OntologyName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
):
    ontologies.delete(deps, user_id, name)
    return Response(204)


@router.get(
    "/v1/gb/datasets/<dataset>/ontology",
    tags=["ontologies", "datasets"],
    summary="The ontology attached to a dataset",
    responses=database_route_responses(
        "the ontology", {400: "a bad user_id or dataset name", 404: "no such dataset, or it has no ontology"}
    ),
)
def get_dataset_ontology(
    dataset: Annotated[DatasetName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
) -> OntologyResponse:
    return OntologyResponse.from_domain(ontologies.dataset_ontology(deps, user_id, dataset))


@router.put(
    "/v1/gb/datasets/<dataset>/ontology",
    tags=["ontologies", "datasets"],
    summary="Attach one of the user's ontologies to a dataset (created if missing), in place of any other",
    responses=database_route_responses(
        "the dataset and its ontology",
        {
            400: "invalid JSON body, unknown field, bad user_id, dataset or ontology name",
            404: "no such ontology",
        },
    ),
)
def attach_ontology(
    dataset: Annotated[DatasetName, Path()],
    request: Annotated[AttachOntologyRequest, Body()],
    deps: Annotated[Bundle, Depends(memory)],
) -> DatasetOntology:
    ontologies.attach(deps, request.user_id, dataset, request.ontology)
    return DatasetOntology(dataset=dataset, ontology=request.ontology)


@router.delete(
    "/v1/gb/datasets/<dataset>/ontology",
    tags=["ontologies", "datasets"],
    summary="Detach a dataset's ontology (204 also when it had none)",
    responses={
        204: {"description": "detached (no body)"},
        **{
            status: response
            for status, response in database_route_responses(
                "", {400: "a bad user_id or dataset name", 404: "no such dataset"}
            ).items()
            if status != 200
        },
    },
)
def detach_ontology(
    dataset: Annotated[DatasetName, Path()],
    user_id: Annotated[UserId, Query()],
    deps: Annotated[Bundle, Depends(memory)],
):
    ontologies.detach(deps, user_id, dataset)
    return Response(204)
