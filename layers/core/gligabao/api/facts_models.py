"""`facts` of POST /v1/gb/remember: entities and edges the caller extracted, in the shape the
extraction stage's reply has (ai/prompts/extract.py), checked strictly: unlike a model's reply, a
bad shape is the caller's to fix, so it is a 400 that stores nothing and calls no model."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from gligabao.ai.prompts.extract import ExtractedEdge, ExtractedEntity, Extraction
from gligabao.api.validation import NON_BLANK_TEXT_PATTERN, RFC3339
from gligabao.errors import BadRequest
from gligabao.limits import Limits
from gligabao.timefmt import parse_rfc3339, rfc3339


def normalized_name(name: str) -> str:
    # imported here, not with the module: the client reads these models without the memory core
    from gligabao.memory.names import normalized_name

    return normalized_name(name)


def _name(value: Any) -> Any:
    if not isinstance(value, str):
        return value  # pydantic says what it should be
    if not normalized_name(value):
        raise ValueError("must not be empty")
    return " ".join(value.split())


def _relation(value: Any) -> Any:
    if isinstance(value, str) and not any(character.isalnum() for character in value):
        raise ValueError("must name the relation (letters or digits)")
    return value


def _fact_time(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str) or not RFC3339.fullmatch(value.strip()):
        raise ValueError("must be an RFC 3339 time with an offset, e.g. 2023-01-01T00:00:00Z")
    try:
        return parse_rfc3339(value)
    except (ValueError, OverflowError):
        raise ValueError("is not a valid time") from None


Name = Annotated[
    str,
    BeforeValidator(_name),
    WithJsonSchema({"type": "string", "minLength": 1, "pattern": NON_BLANK_TEXT_PATTERN}),
]
FactTime = Annotated[
    datetime | None,
    BeforeValidator(_fact_time),
    WithJsonSchema(
        {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}], "description": "RFC 3339"}
    ),
]
Relation = Annotated[
    str,
    BeforeValidator(_relation),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "pattern": NON_BLANK_TEXT_PATTERN,
            "description": "a verb phrase; stored as lowercase snake_case ASCII (Works At -> works_at)",
        }
    ),
]


class FactEntity(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name = Field(
        description="the entity's name; the same entity as a stored one of this normalized name"
    )
    type: str | None = Field(default=None, description="one lowercase word (person, organization, place...)")
    description: str | None = Field(default=None, description="what the entity is")


class FactEdge(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Name = Field(description="the name of one of `entities`")
    target: Name = Field(description="the name of one of `entities`")
    relation: Relation
    description: str | None = Field(default=None, description="the fact as one plain sentence")
    valid_at: FactTime = Field(default=None, description="when it began to hold; default reference_time")
    invalid_at: FactTime = Field(default=None, description="when it stopped holding; at or after valid_at")

    @model_validator(mode="after")
    def _ends_after_it_begins(self) -> FactEdge:
        if self.valid_at and self.invalid_at and self.invalid_at < self.valid_at:
            raise ValueError("invalid_at is before valid_at")
        return self


class FactsInput(BaseModel):
    """`{"entities": [{"name": "Alice", "type": "person"}], "edges": [{"source": "Alice",
    "target": "Acme", "relation": "works_at", "valid_at": "2023-01-01T00:00:00Z"}]}`"""

    model_config = ConfigDict(extra="forbid")

    entities: list[FactEntity] = Field(
        description="at least one; GB_FACTS_MAX_ENTITIES at most (500 by default)"
    )
    edges: list[FactEdge] = Field(
        default_factory=list, description="GB_FACTS_MAX_EDGES at most (500 by default)"
    )

    @model_validator(mode="after")
    def _edges_name_listed_entities(self) -> FactsInput:
        if not self.entities:
            raise ValueError("entities: at least one entity is required")
        listed = {normalized_name(entity.name) for entity in self.entities}
        for index, edge in enumerate(self.edges):
            for end in ("source", "target"):
                name = getattr(edge, end)
                if normalized_name(name) not in listed:
                    raise ValueError(f'edges.{index}.{end}: "{_shown(name)}" is not one of the entities')
        return self

    def check(self, limits: Limits) -> None:
        """The limits of the server: the number of entities and edges, the length of a name."""
        if len(self.entities) > limits.facts_max_entities:
            raise BadRequest(f"facts.entities: at most {limits.facts_max_entities} entities per remember")
        if len(self.edges) > limits.facts_max_edges:
            raise BadRequest(f"facts.edges: at most {limits.facts_max_edges} edges per remember")
        most = limits.entity_name_max_chars
        for index, entity in enumerate(self.entities):
            if len(entity.name) > most:
                raise BadRequest(f"facts.entities.{index}.name: longer than {most} characters")

    def as_given(self) -> str:
        """The artifact's text: the facts as the caller gave them (fields left out stay out)."""
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), ensure_ascii=False)

    def extraction(self) -> Extraction:
        return extraction_of(self)


def extraction_of(facts: FactsInput) -> Extraction:
    """The facts as the extraction stage would have replied them."""
    return Extraction(
        entities=[
            ExtractedEntity(name=e.name, type=e.type or "unknown", description=e.description or "")
            for e in facts.entities
        ],
        edges=[
            ExtractedEdge(
                source=edge.source,
                target=edge.target,
                relation=edge.relation,
                description=edge.description or "",
                valid_at=rfc3339(edge.valid_at),
                invalid_at=rfc3339(edge.invalid_at),
            )
            for edge in facts.edges
        ],
    )


def _shown(name: str, most: int = 60) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"
