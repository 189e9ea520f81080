"""OWL ontologies in RDF/XML, read with rdflib, safely.

The document is the caller's: before rdflib sees it, a first pass of expat over its prolog (it
stops at the root element) refuses what could make the parse reach out or blow up:
- a DOCTYPE with an external subset (SYSTEM or PUBLIC): nothing is ever fetched;
- external and parameter entities (XXE);
- an internal entity whose value refers to another entity (the nesting of "billion laughs"),
  more than `MAX_ENTITIES` of them, or one longer than `MAX_ENTITY_CHARS`.
Plain internal entities stay allowed, as Protégé writes them (`<!ENTITY owl "http://...#">`), and
the text they expand to is bounded before parsing: the references counted in the document times
their values' lengths. rdflib parses from the string (never a URL) and does not follow owl:imports.

Read from the graph: the owl:Class (and rdfs:Class) with an IRI, and the owl:ObjectProperty; each
named by its IRI's local name, described by rdfs:comment (else skos:definition), with rdfs:label,
skos:prefLabel and skos:altLabel as aliases, rdfs:subClassOf / rdfs:subPropertyOf parents, and
rdfs:domain / rdfs:range (a class, or an owl:unionOf of classes). What is read of each class and
property is checked as the JSON form is (memory/ontology.py, EntityTypeForm and RelationTypeForm):
the same lengths, counts and characters, whichever form a caller registers. An RDF list that loops
(its rdf:rest back to itself) is refused, not followed.
"""

from __future__ import annotations

import re
import xml.parsers.expat
from typing import TypeVar

from pydantic import ValidationError
from rdflib import OWL, RDF, RDFS, SKOS, BNode, Graph, Literal, URIRef
from rdflib.collection import Collection

from gligabao.memory.ontology import (
    EntityTypeForm,
    InvalidOntology,
    Ontology,
    RelationTypeForm,
    build_ontology,
)

MAX_ENTITIES = 64
MAX_ENTITY_CHARS = 1024
EXPANDED_MAX_FACTOR = 4  # the text after entity expansion: at most 4 times the document

Form = TypeVar("Form", EntityTypeForm, RelationTypeForm)
# Whitespace, but for the control characters among it (U+000B, U+000C, U+001C-U+001F, U+0085):
# collapsed to a space they would slip past the JSON form's rule against control characters.
_SPACES = re.compile(r"[^\S\x0b\x0c\x1c-\x1f\x85]+")


class _Refused(Exception):
    pass


class _PrologDone(Exception):
    pass


def check_document(document: str) -> None:
    """InvalidOntology when the document is not XML, or declares what this module refuses."""
    entities: dict[str, str] = {}
    parser = xml.parsers.expat.ParserCreate()

    def doctype(name, system_id, public_id, has_internal_subset):
        if system_id or public_id:
            raise _Refused("the document's DOCTYPE names an external DTD, which is never fetched")

    def entity_decl(name, is_parameter, value, base, system_id, public_id, notation):
        if is_parameter:
            raise _Refused(f"parameter entity {name!r} is not allowed")
        if value is None:
            raise _Refused(f"external entity {name!r} is not allowed (nothing is ever fetched)")
        if "&" in value or "%" in value:
            raise _Refused(f"entity {name!r} refers to another entity: nested entities are not allowed")
        if len(value) > MAX_ENTITY_CHARS:
            raise _Refused(f"entity {name!r} is longer than {MAX_ENTITY_CHARS} characters")
        entities[name] = value
        if len(entities) > MAX_ENTITIES:
            raise _Refused(f"more than {MAX_ENTITIES} entities are declared")

    def root(name, attributes):
        raise _PrologDone

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity_decl
    parser.StartElementHandler = root
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(document.encode(), True)
    except _PrologDone:
        pass
    except _Refused as exc:
        raise InvalidOntology(str(exc)) from None
    except xml.parsers.expat.ExpatError as exc:
        raise InvalidOntology(f"the document is not well-formed XML: {exc}") from None
    else:
        raise InvalidOntology("the document has no root element")
    expanded = len(document) + sum(
        len(re.findall(f"&{re.escape(name)};", document)) * len(value) for name, value in entities.items()
    )
    if expanded > EXPANDED_MAX_FACTOR * max(len(document), MAX_ENTITY_CHARS):
        raise InvalidOntology("the document's entities expand to too much text")


def parse_owl(name: str, document: str, out_of_ontology: str, *, max_types: int) -> Ontology:
    """The ontology an OWL RDF/XML document declares (module docstring); InvalidOntology with what
    is wrong otherwise. Each class and property is read into the JSON form's model, so the OWL form
    obeys the same limits and character rules."""
    check_document(document)
    graph = Graph()
    try:
        graph.parse(data=document, format="xml")
    except Exception as exc:  # rdflib raises whatever its parser met: all of it is the document's fault
        raise InvalidOntology(f"the document is not OWL in RDF/XML: {_first_line(exc)}") from None
    classes = _subjects(graph, OWL.Class) | _subjects(graph, RDFS.Class)
    properties = _subjects(graph, OWL.ObjectProperty)
    if not classes:
        raise InvalidOntology("the document declares no owl:Class")
    for kind, found in (("classes", classes), ("object properties", properties)):
        if len(found) > max_types:
            raise InvalidOntology(f"at most {max_types} {kind} (got {len(found)})")
    class_name = {iri: _local_name(iri) for iri in classes}
    property_name = {iri: _local_name(iri) for iri in properties}
    entity_types = [
        _form(EntityTypeForm, "class", iri, _class_fields(graph, iri, class_name)).entity_type()
        for iri in sorted(classes)
    ]
    relation_types = [
        _form(
            RelationTypeForm, "object property", iri, _property_fields(graph, iri, class_name, property_name)
        ).relation_type()
        for iri in sorted(properties)
    ]
    return build_ontology(name, entity_types, relation_types, out_of_ontology, max_types=max_types)


def _class_fields(graph: Graph, iri: URIRef, class_name: dict[URIRef, str]) -> dict:
    """What the document says of a class, as the JSON form's fields."""
    return {
        "name": class_name[iri],
        "description": _description(graph, iri),
        "aliases": _aliases(graph, iri),
        "parents": _names(_objects(graph, iri, RDFS.subClassOf), class_name),
    }


def _property_fields(
    graph: Graph, iri: URIRef, class_name: dict[URIRef, str], property_name: dict[URIRef, str]
) -> dict:
    """What the document says of an object property, as the JSON form's fields."""
    return {
        "name": property_name[iri],
        "description": _description(graph, iri),
        "domain": _classes_of(graph, iri, RDFS.domain, class_name),
        "range": _classes_of(graph, iri, RDFS.range, class_name),
        "aliases": _aliases(graph, iri),
        "parents": _names(_objects(graph, iri, RDFS.subPropertyOf), property_name),
    }


# Where each field of the JSON form comes from in the document, for the 400 that names it.
_SOURCES = {
    "name": "its IRI's local name",
    "description": "rdfs:comment or skos:definition",
    "aliases": "rdfs:label, skos:prefLabel, skos:altLabel",
    "parents": "rdfs:subClassOf or rdfs:subPropertyOf",
    "domain": "rdfs:domain",
    "range": "rdfs:range",
}


def _form(model: type[Form], kind: str, iri: URIRef, fields: dict) -> Form:
    """The JSON form's model of a class or property; InvalidOntology naming the class or property,
    the field and the rule it breaks (never the value: it may be 500 KiB long)."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        source = _SOURCES.get(str(error["loc"][0]) if error["loc"] else "", "")
        raise InvalidOntology(
            f"{kind} {_shown(iri)}: {where}: {message}" + (f" ({source})" if source else "")
        ) from None


def _subjects(graph: Graph, kind: URIRef) -> set[URIRef]:
    return {s for s in graph.subjects(RDF.type, kind) if isinstance(s, URIRef)}


def _objects(graph: Graph, subject: URIRef, predicate: URIRef) -> list:
    return sorted(graph.objects(subject, predicate), key=str)


def _names(nodes: list, name_of: dict[URIRef, str]) -> list[str]:
    """The names of the nodes that are declared (a parent outside the document is left out), each once."""
    return list(dict.fromkeys(name_of[node] for node in nodes if node in name_of))


def _local_name(iri: URIRef) -> str:
    text = str(iri)
    return re.split(r"[#/:]", text.rstrip("#/"))[-1] or text


def _description(graph: Graph, iri: URIRef) -> str:
    for predicate in (RDFS.comment, SKOS.definition):
        texts = _texts(graph, iri, predicate)
        if texts:
            return texts[0]
    return ""


def _aliases(graph: Graph, iri: URIRef) -> list[str]:
    name = _local_name(iri)
    labels = [t for p in (RDFS.label, SKOS.prefLabel, SKOS.altLabel) for t in _texts(graph, iri, p)]
    return list(dict.fromkeys(label for label in labels if label != name))


def _texts(graph: Graph, iri: URIRef, predicate: URIRef) -> list[str]:
    """The literals, English (or untagged) first, each once, whitespace collapsed. Only literals: a
    label or comment that is an IRI or a blank node is no text (a blank node's name is random: the
    result would be too)."""
    literals = [o for o in graph.objects(iri, predicate) if isinstance(o, Literal)]
    ordered = sorted(literals, key=lambda lit: (lit.language not in (None, "en"), str(lit)))
    texts = (_SPACES.sub(" ", str(lit)).strip(" ") for lit in ordered)
    return list(dict.fromkeys(text for text in texts if text))


def _classes_of(graph: Graph, iri: URIRef, predicate: URIRef, class_name: dict[URIRef, str]) -> list[str]:
    """The classes of a domain or range: named, or an owl:unionOf of named classes."""
    nodes: list = []
    for value in _objects(graph, iri, predicate):
        if isinstance(value, URIRef):
            nodes.append(value)
        elif isinstance(value, BNode):
            for union in graph.objects(value, OWL.unionOf):
                nodes += _members(
                    graph, union, f"the owl:unionOf of rdfs:{_local_name(predicate)} of {_shown(iri)}"
                )
    return _names(nodes, class_name)


def _members(graph: Graph, head, what: str) -> list:
    """The members of an RDF list; InvalidOntology when it loops (rdflib raises a ValueError)."""
    try:
        return list(Collection(graph, head))
    except ValueError:
        raise InvalidOntology(f"{what} is a list whose rdf:rest loops back into itself") from None


def _shown(iri: URIRef, most: int = 80) -> str:
    text = str(iri)
    return repr(text if len(text) <= most else text[: most - 1] + "…")


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
