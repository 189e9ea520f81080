"""Ontologies: a user's named sets of allowed entity and relation types (memory/ontology.py), stored
from OWL RDF/XML (memory/owl.py) or a JSON form, and attached to datasets to steer their extraction."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

from gligabao.db import ontologies as ontology_rows
from gligabao.errors import BadRequest, Conflict, NotFound
from gligabao.memory.ontology import InvalidOntology, Ontology, build_ontology
from gligabao.memory.owl import parse_owl
from gligabao.memory.ports import Memory


@dataclass(frozen=True)
class OntologyDocument:
    """What a caller registers: an OWL RDF/XML `document` (format 'owl'), or the JSON form already
    turned into types (format 'json', `document` its JSON text)."""

    name: str
    format: str
    document: str
    out_of_ontology: str
    description: str = ""
    json_form: Ontology | None = None  # the types of the JSON form


@dataclass(frozen=True)
class StoredOntology:
    name: str
    description: str
    format: str
    document: str
    sha256: str
    ontology: Ontology
    datasets: list[str]
    created_at: datetime
    updated_at: datetime


def parsed(document: OntologyDocument, max_types: int) -> Ontology:
    """The ontology a document declares; 400 with what is wrong."""
    try:
        if document.format == "owl":
            return parse_owl(document.name, document.document, document.out_of_ontology, max_types=max_types)
        assert document.json_form is not None
        form = document.json_form
        return build_ontology(
            document.name,
            form.entity_types,
            form.relation_types,
            document.out_of_ontology,
            max_types=max_types,
        )
    except InvalidOntology as exc:
        raise BadRequest(f"invalid ontology: {exc}") from None


def create(
    memory: Memory, user_id: str, document: OntologyDocument, dataset: str | None = None
) -> StoredOntology:
    """Register the ontology (409 if the user has one of that name), attached to `dataset` if named."""
    row = _row(document, parsed(document, memory.limits.ontology_max_types))
    with memory.database.transaction(user_id) as uow:
        stored = ontology_rows.insert(uow.conn, user_id, row)
        if stored is None:
            raise Conflict(f"ontology {document.name!r} exists already (PUT replaces it)")
        if dataset is not None:
            ontology_rows.attach(uow.conn, user_id, dataset, document.name)
            stored = ontology_rows.find(uow.conn, user_id, document.name)
    return _stored(stored)


def replace(memory: Memory, user_id: str, document: OntologyDocument) -> StoredOntology:
    """Replace the ontology's document and setting; its attachments stay. 404 when it does not exist."""
    row = _row(document, parsed(document, memory.limits.ontology_max_types))
    with memory.database.transaction(user_id) as uow:
        stored = ontology_rows.replace(uow.conn, user_id, row)
    if stored is None:
        raise NotFound(f"ontology {document.name!r} not found")
    return _stored(stored)


def get(memory: Memory, user_id: str, name: str) -> StoredOntology:
    with memory.database.transaction(user_id) as uow:
        stored = ontology_rows.find(uow.conn, user_id, name)
    if stored is None:
        raise NotFound(f"ontology {name!r} not found")
    return _stored(stored)


def list_ontologies(memory: Memory, user_id: str) -> list[StoredOntology]:
    with memory.database.transaction(user_id) as uow:
        return [_stored(row) for row in ontology_rows.list_all(uow.conn, user_id)]


def delete(memory: Memory, user_id: str, name: str) -> None:
    """Delete the ontology: 404 when it does not exist, 409 naming the datasets it is attached to
    (detach it first: deleting it would silently change what their extraction keeps)."""
    with memory.database.transaction(user_id) as uow:
        found, attached = ontology_rows.delete_unattached(uow.conn, user_id, name)
    if not found:
        raise NotFound(f"ontology {name!r} not found")
    if attached:
        raise Conflict(
            f"ontology {name!r} is attached to dataset(s) {', '.join(attached)}: detach it first "
            "(DELETE /v1/gb/datasets/{dataset}/ontology)"
        )


def attach(memory: Memory, user_id: str, dataset: str, ontology: str) -> None:
    """Attach the ontology to the dataset (created when missing); 404 when the ontology does not exist."""
    with memory.database.transaction(user_id) as uow:
        if not ontology_rows.attach(uow.conn, user_id, dataset, ontology):
            raise NotFound(f"ontology {ontology!r} not found")


def detach(memory: Memory, user_id: str, dataset: str) -> None:
    """Detach the dataset's ontology (nothing to do when it has none); 404 when the dataset does not exist."""
    with memory.database.transaction(user_id) as uow:
        if not ontology_rows.detach(uow.conn, user_id, dataset):
            raise NotFound(f"dataset {dataset!r} not found")


def dataset_ontology(memory: Memory, user_id: str, dataset: str) -> StoredOntology:
    """The ontology attached to the dataset, stored form; 404 without the dataset or an ontology."""
    with memory.database.transaction(user_id) as uow:
        if not ontology_rows.dataset_exists(uow.conn, user_id, dataset):
            raise NotFound(f"dataset {dataset!r} not found")
        row = ontology_rows.of_dataset(uow.conn, user_id, dataset)
        stored = ontology_rows.find(uow.conn, user_id, row["name"]) if row else None
    if stored is None:
        raise NotFound(f"dataset {dataset!r} has no ontology")
    return _stored(stored)


def _row(document: OntologyDocument, ontology: Ontology) -> dict:
    return {
        "name": document.name,
        "description": document.description,
        "format": document.format,
        "document": document.document,
        "sha256": hashlib.sha256(document.document.encode()).hexdigest(),
        "parsed": ontology.to_json(),
        "out_of_ontology": document.out_of_ontology,
    }


def _stored(row: dict) -> StoredOntology:
    return StoredOntology(
        name=row["name"],
        description=row["description"],
        format=row["format"],
        document=row["document"],
        sha256=row["sha256"],
        ontology=Ontology.from_json(row["name"], row["parsed"], row["out_of_ontology"]),
        datasets=list(row["datasets"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def json_document(form: dict) -> str:
    """The JSON form as stored: its canonical text (sorted keys), so its sha256 says whether it changed."""
    return json.dumps(form, sort_keys=True, ensure_ascii=False)
