"""An ontology: the entity types and relation types a dataset's graph may hold, and what becomes
of an extracted entity or fact outside them (`out_of_ontology`: mapped to the nearest allowed type,
or dropped).

Types are stored as the graph stores any type: an entity type as lowercase words ("Organization"
-> "organization"), a relation as snake_case ("worksFor" -> "works_for"). Names match whatever
their case, underscores and spaces ("works for", "WorksFor" and "works_for" are one relation).

The nearest allowed type, deterministic, in this order:
1. the same name (case, underscores and spaces aside);
2. an alias: a class's or property's rdfs:label, skos:prefLabel or skos:altLabel in OWL, `aliases` in
   the JSON form ("Company" as an alias of Organization);
3. for a relation, the only allowed relation whose domain and range fit the fact's two entities;
4. the highest cosine similarity between the embedding of the extracted name and that of each
   allowed type's "name: description" (one batched embeddings request for the whole remember,
   only when a name got this far), among the relations whose domain and range fit for a fact;
   below `NEAREST_MIN_SIMILARITY` nothing is near, and the entity or fact is dropped.
A fact whose relation is allowed but whose ends do not fit its domain and range (subclasses fit,
through rdfs:subClassOf) is handled as a relation outside the ontology. A fact with no allowed
relation that fits its ends is dropped, whatever the setting; so is a fact whose entity was dropped.

The JSON form's models (EntityTypeForm, RelationTypeForm) hold the rules of a type's name,
description, aliases, parents, domain and range: the API validates the JSON form with them, and
memory/owl.py reads an OWL document into them, so both forms obey one set of rules.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from gligabao.memory.extraction import (
    UNKNOWN_TYPE,
    TextEntity,
    TextFact,
    TextGraph,
    entity_type,
    relation_name,
)

OUT_OF_ONTOLOGY = ("map", "drop")
# Cosine under which no allowed type is near an extracted name: an "Animal" in an ontology of
# people and organizations is dropped rather than stored as the least unlike of them.
NEAREST_MIN_SIMILARITY = 0.2

# texts -> their vectors, in order (one embeddings request)
Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]


def words_of(name: str) -> str:
    """'worksFor' -> 'works For', 'PlaceOfBirth' -> 'Place Of Birth': camel case split in words."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)


def squashed(name: str) -> str:
    """The key two names match on: letters and digits only, lowercase."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", name).lower() if ch.isalnum())


def entity_type_key(name: str) -> str:
    return entity_type(words_of(name))


def relation_key(name: str) -> str:
    return relation_name(words_of(name))


@dataclass(frozen=True)
class EntityType:
    name: str  # as the ontology writes it
    key: str  # as the graph stores it
    description: str = ""
    aliases: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()  # the keys of its direct superclasses


@dataclass(frozen=True)
class RelationType:
    name: str
    key: str
    description: str = ""
    domain: tuple[str, ...] = ()  # entity type keys its source may have; () = any
    range: tuple[str, ...] = ()  # entity type keys its target may have; () = any
    aliases: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ontology:
    name: str
    entity_types: tuple[EntityType, ...]
    relation_types: tuple[RelationType, ...]
    out_of_ontology: str = "map"

    def to_json(self) -> dict:
        """The parsed form, as stored (gb_ontologies.parsed) and read back."""
        return {
            "entity_types": [
                {
                    "name": t.name,
                    "type": t.key,
                    "description": t.description,
                    "aliases": list(t.aliases),
                    "parents": list(t.parents),
                }
                for t in self.entity_types
            ],
            "relation_types": [
                {
                    "name": r.name,
                    "relation": r.key,
                    "description": r.description,
                    "domain": list(r.domain),
                    "range": list(r.range),
                    "aliases": list(r.aliases),
                    "parents": list(r.parents),
                }
                for r in self.relation_types
            ],
        }

    @classmethod
    def from_json(cls, name: str, parsed: dict, out_of_ontology: str) -> Ontology:
        return cls(
            name,
            tuple(
                EntityType(t["name"], t["type"], t["description"], tuple(t["aliases"]), tuple(t["parents"]))
                for t in parsed["entity_types"]
            ),
            tuple(
                RelationType(
                    r["name"],
                    r["relation"],
                    r["description"],
                    tuple(r["domain"]),
                    tuple(r["range"]),
                    tuple(r["aliases"]),
                    tuple(r["parents"]),
                )
                for r in parsed["relation_types"]
            ),
            out_of_ontology,
        )


# --- the JSON form: its rules are the OWL form's too (memory/owl.py builds it from the document) --


def _string(value: object) -> object:
    """A string, never a number or a list turned into one: api/validation.py's _strictly_string,
    which this layer may not import."""
    if value is not None and not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _no_control_characters(value: str) -> str:
    """No control character (NUL, which PostgreSQL text and jsonb cannot hold, escapes that would
    reach prompts); tabs and line breaks stay."""
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n\r" for ch in value):
        raise ValueError("must not contain control characters")
    return value


def _named(value: str) -> str:
    if not any(ch.isalnum() for ch in value):
        raise ValueError("a type name needs a letter or a digit")
    return value


# The constraints before the validators: pydantic then says "String should have at most 100
# characters", not "Value should have at most 100 items".
TypeName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=100),
    BeforeValidator(_string),
    AfterValidator(_no_control_characters),
    AfterValidator(_named),
]
Description = Annotated[
    str,
    StringConstraints(max_length=1000),
    BeforeValidator(_string),
    AfterValidator(_no_control_characters),
]
Names = Annotated[list[TypeName], Field(max_length=50)]


class EntityTypeForm(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: TypeName = Field(description='"Person"; stored on entities as lowercase words ("person")')
    description: Description = ""
    aliases: Names = Field(default_factory=list, description='other names of it ("Company"), matched as it')
    parents: Names = Field(default_factory=list, description="the entity types it is a kind of")

    def entity_type(self) -> EntityType:
        return EntityType(
            self.name,
            entity_type_key(self.name),
            self.description.strip(),
            tuple(self.aliases),
            tuple(entity_type_key(p) for p in self.parents),
        )


class RelationTypeForm(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: TypeName = Field(description='"worksFor"; stored on edges in snake_case ("works_for")')
    description: Description = ""
    domain: Names = Field(default_factory=list, description="the entity types of its source; [] = any")
    range: Names = Field(default_factory=list, description="the entity types of its target; [] = any")
    aliases: Names = Field(default_factory=list)
    parents: Names = Field(default_factory=list, description="the relation types it is a kind of")

    def relation_type(self) -> RelationType:
        return RelationType(
            self.name,
            relation_key(self.name),
            self.description.strip(),
            tuple(entity_type_key(d) for d in self.domain),
            tuple(entity_type_key(d) for d in self.range),
            tuple(self.aliases),
            tuple(relation_key(p) for p in self.parents),
        )


class InvalidOntology(ValueError):
    """What makes a set of types no ontology (the API's 400 says it)."""


def build_ontology(
    name: str,
    entity_types: Sequence[EntityType],
    relation_types: Sequence[RelationType],
    out_of_ontology: str,
    *,
    max_types: int,
) -> Ontology:
    """The ontology, checked: at least one entity type, at most `max_types` of each kind, no two
    types of one kind with the same key, every domain, range and parent a declared entity type
    (relation parents: a declared relation)."""
    if not entity_types:
        raise InvalidOntology("an ontology needs at least one entity type")
    for kind, types in (("entity types", entity_types), ("relation types", relation_types)):
        nameless = next((t.name for t in types if not squashed(t.name)), None)
        if nameless is not None:
            raise InvalidOntology(f"{kind}: {nameless!r} has no letter or digit")
        if len(types) > max_types:
            raise InvalidOntology(f"at most {max_types} {kind} (got {len(types)})")
        seen: dict[str, str] = {}
        for t in types:
            if t.key in seen:
                raise InvalidOntology(f"{kind}: {seen[t.key]!r} and {t.name!r} are the same name")
            seen[t.key] = t.name
    known = {t.key for t in entity_types}
    relations = {r.key for r in relation_types}
    for t in entity_types:
        _check_known(f"entity type {t.name!r}: parent", t.parents, known)
    for r in relation_types:
        _check_known(f"relation type {r.name!r}: domain", r.domain, known)
        _check_known(f"relation type {r.name!r}: range", r.range, known)
        _check_known(f"relation type {r.name!r}: parent", r.parents, relations)
    return Ontology(name, tuple(entity_types), tuple(relation_types), out_of_ontology)


def _check_known(what: str, keys: Sequence[str], known: set[str]) -> None:
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise InvalidOntology(f"{what} {unknown[0]!r} is not declared")


@dataclass(frozen=True)
class OntologyCounts:
    """What the ontology changed in one remember's graph."""

    name: str
    mapped_entity_types: int = 0  # entities whose extracted type became another, allowed one
    dropped_entities: int = 0
    mapped_relations: int = 0  # facts whose relation became another, allowed one
    dropped_relations: int = 0  # facts dropped (their relation, or one of their entities)


class _Nearest:
    """Cosine similarity of names to the allowed types' texts. The first comparison embeds every
    text a comparison of this remember may need, in one request; none is made without one."""

    def __init__(self, embed: Embed | None, texts: Sequence[str]):
        self._embed, self._texts = embed, list(dict.fromkeys(texts))
        self._vector_of: dict[str, Sequence[float]] | None = None

    def best(self, label: str, candidates: Sequence[tuple[str, str]]) -> str | None:
        """The key of the candidate (key, text) most similar to `label` (the first on a tie); None
        without an embedder, or when none is near enough."""
        if self._embed is None:
            return None
        if self._vector_of is None:
            self._vector_of = dict(zip(self._texts, self._embed(self._texts), strict=True))
        scores = [_cosine(self._vector_of[label], self._vector_of[text]) for _, text in candidates]
        best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
        return candidates[best][0] if scores[best] >= NEAREST_MIN_SIMILARITY else None


def conform(
    graph: TextGraph, ontology: Ontology, embed: Embed | None = None
) -> tuple[TextGraph, OntologyCounts]:
    """The graph with every entity type and relation allowed by the ontology (module docstring):
    mapped or dropped. `embed` (texts -> vectors) is called at most once, in map mode, when a name
    matches no type by name, alias, or domain and range."""
    by_entity = {squashed(n): t for t in ontology.entity_types for n in (t.name, t.key, *t.aliases)}
    by_relation = {squashed(n): r for r in ontology.relation_types for n in (r.name, r.key, *r.aliases)}
    types = {t.key: t for t in ontology.entity_types}
    lineage = _Lineage(types)
    mapping = ontology.out_of_ontology == "map"

    # Entities: by name or alias; an untyped one by the allowed relation its facts name.
    settled: dict[str, str] = {}  # normalized name -> entity type key
    outside: list[TextEntity] = []
    for entity in graph.entities:
        found = by_entity.get(squashed(entity.type)) if entity.type != UNKNOWN_TYPE else None
        key = found.key if found else _implied_type(entity, graph.facts, by_relation)
        if key is not None:
            settled[entity.normalized_name] = key
        else:
            outside.append(entity)

    entity_texts = [(t.key, _type_text(t)) for t in ontology.entity_types]
    nearest = _Nearest(
        embed if mapping else None,
        [_entity_label(e) for e in outside]
        + [text for _, text in entity_texts]
        + [_relation_label(f) for f in graph.facts]
        + [_type_text(r) for r in ontology.relation_types],
    )
    for entity in outside:
        key = nearest.best(_entity_label(entity), entity_texts)
        if key is not None:
            settled[entity.normalized_name] = key

    counts = {"mapped_entity_types": 0, "dropped_entities": 0, "mapped_relations": 0, "dropped_relations": 0}
    entities: list[TextEntity] = []
    for entity in graph.entities:
        key = settled.get(entity.normalized_name)
        if key is None:
            counts["dropped_entities"] += 1
            continue
        if entity.type != UNKNOWN_TYPE and squashed(entity.type) not in (
            squashed(key),
            squashed(types[key].name),
        ):
            counts["mapped_entity_types"] += 1
        entity.type = key
        entities.append(entity)

    facts: dict[tuple[str, str, str], TextFact] = {}
    for fact in graph.facts:
        key = _relation_for(fact, settled, ontology, by_relation, lineage, nearest if mapping else None)
        if key is None:
            counts["dropped_relations"] += 1
            continue
        counts["mapped_relations"] += squashed(key) != squashed(fact.relation)
        fact.relation = key
        same = (fact.source.normalized_name, fact.target.normalized_name, key)
        if same in facts:  # two facts mapped onto one: kept once, with what either says
            kept = facts[same]
            kept.description = kept.description or fact.description
            kept.invalid_at = kept.invalid_at or fact.invalid_at
            kept.pieces |= fact.pieces
        else:
            facts[same] = fact
    return TextGraph(entities, list(facts.values()), graph.summaries), OntologyCounts(ontology.name, **counts)


def prompt_section(ontology: Ontology) -> str:
    """What extraction is told of the ontology: the allowed types, with their descriptions, and
    the allowed relations, with their domain and range."""
    lines = [
        "Use only these entity types and relations, written as here.",
        "When none fits exactly, use the nearest one."
        if ontology.out_of_ontology == "map"
        else "Leave out an entity of none of these types, and a fact none of these relations states.",
        "Entity types:",
        *(f"- {t.key}" + (f": {t.description}" if t.description else "") for t in ontology.entity_types),
        "Relations (source type -> target type):",
        *(
            f"- {r.key} ({' or '.join(r.domain) or 'any'} -> {' or '.join(r.range) or 'any'})"
            + (f": {r.description}" if r.description else "")
            for r in ontology.relation_types
        ),
    ]
    return "\n".join(lines)


def _relation_for(
    fact: TextFact,
    settled: dict[str, str],
    ontology: Ontology,
    by_relation: dict[str, RelationType],
    lineage: _Lineage,
    nearest: _Nearest | None,
) -> str | None:
    """The allowed relation a fact takes, or None: dropped (module docstring, steps 1 to 4)."""
    source_type = settled.get(fact.source.normalized_name)
    target_type = settled.get(fact.target.normalized_name)
    if source_type is None or target_type is None:  # an entity of it was dropped
        return None
    named = by_relation.get(squashed(fact.relation))
    if named is not None and _fits(named, source_type, target_type, lineage):
        return named.key
    if nearest is None:  # drop mode
        return None
    fitting = [r for r in ontology.relation_types if _fits(r, source_type, target_type, lineage)]
    if len(fitting) <= 1:
        return fitting[0].key if fitting else None
    return nearest.best(_relation_label(fact), [(r.key, _type_text(r)) for r in fitting])


def _implied_type(entity: TextEntity, facts: Sequence[TextFact], by_relation: dict) -> str | None:
    """An untyped entity's type, when an allowed relation of its facts names exactly one."""
    if entity.type != UNKNOWN_TYPE:
        return None
    for fact in facts:
        relation = by_relation.get(squashed(fact.relation))
        if relation is None:
            continue
        if fact.source is entity and len(relation.domain) == 1:
            return relation.domain[0]
        if fact.target is entity and len(relation.range) == 1:
            return relation.range[0]
    return None


class _Lineage:
    """Each entity type with its ancestors (rdfs:subClassOf, cycles allowed), worked out once per
    type a remember meets: a fit is then a set lookup, whatever the depth of the hierarchy."""

    def __init__(self, types: dict[str, EntityType]):
        self._types = types
        self._known: dict[str, frozenset[str]] = {}

    def of(self, key: str) -> frozenset[str]:
        if key not in self._known:
            seen, todo = set(), [key]
            while todo:
                current = todo.pop()
                if current in seen:
                    continue
                seen.add(current)
                todo.extend(self._types[current].parents if current in self._types else ())
            self._known[key] = frozenset(seen)
        return self._known[key]


def _fits(relation: RelationType, source_type: str, target_type: str, lineage: _Lineage) -> bool:
    """Whether the types, or one of their ancestors, are among the relation's domain and range
    (an empty domain or range takes any type)."""
    return (not relation.domain or not lineage.of(source_type).isdisjoint(relation.domain)) and (
        not relation.range or not lineage.of(target_type).isdisjoint(relation.range)
    )


def _entity_label(entity: TextEntity) -> str:
    """What an entity outside the ontology is compared by: its type; its name and description
    when it has no type."""
    if entity.type != UNKNOWN_TYPE:
        return entity.type
    return f"{entity.name}: {entity.description}" if entity.description else entity.name


def _relation_label(fact: TextFact) -> str:
    return fact.relation.replace("_", " ")


def _type_text(t: EntityType | RelationType) -> str:
    return f"{words_of(t.name)}: {t.description}" if t.description else words_of(t.name)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0
