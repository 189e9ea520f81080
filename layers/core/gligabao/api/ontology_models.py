"""Requests and responses of the ontology routes (/v1/gb/ontologies, /v1/gb/datasets/{dataset}/ontology)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from gligabao.api.models import absent
from gligabao.api.validation import DatasetName, UserId, _strictly_string, path_name
from gligabao.errors import BadRequest, PayloadTooLarge
from gligabao.limits import Limits
from gligabao.memory.ontologies import OntologyDocument, StoredOntology, json_document
from gligabao.memory.ontology import Description, EntityTypeForm, Ontology, RelationTypeForm
from gligabao.timefmt import rfc3339

OntologyName = path_name("name")

OUT_OF_ONTOLOGY_DESCRIPTION = (
    "what becomes of an extracted entity type or relation outside the ontology: map (to the nearest "
    "allowed one, the default) or drop"
)


class OntologyBody(BaseModel):
    """Exactly one of `content` (OWL in RDF/XML) and the JSON form (`entity_types`, and
    `relation_types`). Unknown fields are refused. The JSON form's models are memory/ontology.py's:
    an OWL document is read into them (memory/owl.py), so both forms obey the same limits."""

    model_config = ConfigDict(extra="forbid")

    user_id: UserId
    description: Description = ""
    content: Annotated[str | None, BeforeValidator(_strictly_string)] = Field(
        default=None, description="the ontology as OWL in RDF/XML (as the gligabao server takes it)"
    )
    entity_types: list[EntityTypeForm] | None = Field(
        default=None, description="the JSON form's entity types"
    )
    relation_types: list[RelationTypeForm] | None = Field(
        default=None, description="the JSON form's relation types (with entity_types only)"
    )
    out_of_ontology: Literal["map", "drop"] = Field(default="map", description=OUT_OF_ONTOLOGY_DESCRIPTION)

    def document(self, name: str, limits: Limits) -> OntologyDocument:
        """The document to register; 400 without exactly one form, 413 when it is too large."""
        if (self.content is None) == (self.entity_types is None):
            if self.content is None and self.relation_types is not None:
                raise BadRequest("relation_types needs entity_types (the JSON form)")
            raise BadRequest(
                "exactly one of content (OWL RDF/XML) and entity_types (the JSON form) is required"
            )
        if self.content is not None:
            text, form, kind = self.content, None, "owl"
        else:
            text, form, kind = json_document(self._json_form()), self._ontology(name), "json"
        if len(text.encode()) > limits.ontology_max_bytes:
            raise PayloadTooLarge(f"the ontology is larger than {limits.ontology_max_bytes} bytes")
        return OntologyDocument(name, kind, text, self.out_of_ontology, self.description, form)

    def _json_form(self) -> dict:
        return {
            "entity_types": [t.model_dump() for t in self.entity_types or []],
            "relation_types": [r.model_dump() for r in self.relation_types or []],
        }

    def _ontology(self, name: str) -> Ontology:
        return Ontology(
            name,
            tuple(t.entity_type() for t in self.entity_types or []),
            tuple(r.relation_type() for r in self.relation_types or []),
            self.out_of_ontology,
        )


class CreateOntologyRequest(OntologyBody):
    """`{"user_id": "u1", "name": "people", "content": "<rdf:RDF ...>"}` or the JSON form."""

    name: OntologyName
    dataset: DatasetName | None = Field(
        default=None, description="attach it to this dataset (created if missing)"
    )


class ReplaceOntologyRequest(OntologyBody):
    """The same as create, the name in the path; the datasets it is attached to stay."""


class AttachOntologyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: UserId
    ontology: OntologyName = Field(description="the name of one of the user's ontologies")


class EntityTypeOut(BaseModel):
    name: str
    type: str = Field(description="as entities store it")
    description: str
    aliases: list[str]
    parents: list[str] = Field(description="the types (as stored) it is a kind of")


class RelationTypeOut(BaseModel):
    name: str
    relation: str = Field(description="as edges store it")
    description: str
    domain: list[str]
    range: list[str]
    aliases: list[str]
    parents: list[str]


class OntologyCountsOut(BaseModel):
    entity_types: int
    relation_types: int


class OntologySummary(BaseModel):
    name: str
    description: str
    format: Literal["owl", "json"] = Field(description="owl: registered as OWL RDF/XML; json: the JSON form")
    out_of_ontology: Literal["map", "drop"]
    sha256: str = Field(description="of the document as registered")
    size_bytes: int
    counts: OntologyCountsOut
    datasets: list[str] = Field(description="the datasets it is attached to")
    created_at: str
    updated_at: str


class OntologyResponse(OntologySummary):
    entity_types: list[EntityTypeOut]
    relation_types: list[RelationTypeOut]
    content: str | None = Field(
        default=None, exclude_if=absent, description="the OWL document; omitted for json"
    )

    @classmethod
    def from_domain(cls, stored: StoredOntology) -> OntologyResponse:
        parsed = stored.ontology.to_json()
        return cls(
            **_summary_fields(stored),
            entity_types=[EntityTypeOut(**t) for t in parsed["entity_types"]],
            relation_types=[RelationTypeOut(**r) for r in parsed["relation_types"]],
            content=stored.document if stored.format == "owl" else None,
        )


class OntologyList(BaseModel):
    ontologies: list[OntologySummary]

    @classmethod
    def from_domain(cls, stored: list[StoredOntology]) -> OntologyList:
        return cls(ontologies=[OntologySummary(**_summary_fields(s)) for s in stored])


class DatasetOntology(BaseModel):
    dataset: str
    ontology: str


def _summary_fields(stored: StoredOntology) -> dict:
    return {
        "name": stored.name,
        "description": stored.description,
        "format": stored.format,
        "out_of_ontology": stored.ontology.out_of_ontology,
        "sha256": stored.sha256,
        "size_bytes": len(stored.document.encode()),
        "counts": OntologyCountsOut(
            entity_types=len(stored.ontology.entity_types), relation_types=len(stored.ontology.relation_types)
        ),
        "datasets": stored.datasets,
        "created_at": rfc3339(stored.created_at),
        "updated_at": rfc3339(stored.updated_at),
    }
