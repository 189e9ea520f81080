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
rdfs:domain / rdfs:range (a class, or an owl:unionOf of classes).
"""

from __future__ import annotations

import re
import xml.parsers.expat

from rdflib import OWL, RDF, RDFS, SKOS, BNode, Graph, URIRef
from rdflib.collection import Collection

from gligabao.memory.ontology import (
    EntityType,
    InvalidOntology,
    Ontology,
    RelationType,
    build_ontology,
    entity_type_key,
    relation_key,
)

MAX_ENTITIES = 64
MAX_ENTITY_CHARS = 1024
EXPANDED_MAX_FACTOR = 4  # the text after entity expansion: at most 4 times the document


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
    is wrong otherwise."""
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
    class_key = {iri: entity_type_key(_local_name(iri)) for iri in classes}
    property_key = {iri: relation_key(_local_name(iri)) for iri in properties}
    entity_types = [
        EntityType(
            _local_name(iri),
            class_key[iri],
            _description(graph, iri),
            _aliases(graph, iri),
            tuple(class_key[p] for p in _objects(graph, iri, RDFS.subClassOf) if p in class_key),
        )
        for iri in sorted(classes)
    ]
    relation_types = [
        RelationType(
            _local_name(iri),
            property_key[iri],
            _description(graph, iri),
            _classes_of(graph, iri, RDFS.domain, class_key),
            _classes_of(graph, iri, RDFS.range, class_key),
            _aliases(graph, iri),
            tuple(property_key[p] for p in _objects(graph, iri, RDFS.subPropertyOf) if p in property_key),
        )
        for iri in sorted(properties)
    ]
    return build_ontology(name, entity_types, relation_types, out_of_ontology, max_types=max_types)


def _subjects(graph: Graph, kind: URIRef) -> set[URIRef]:
    return {s for s in graph.subjects(RDF.type, kind) if isinstance(s, URIRef)}


def _objects(graph: Graph, subject: URIRef, predicate: URIRef) -> list:
    return sorted(graph.objects(subject, predicate), key=str)


def _local_name(iri: URIRef) -> str:
    text = str(iri)
    return re.split(r"[#/:]", text.rstrip("#/"))[-1] or text


def _description(graph: Graph, iri: URIRef) -> str:
    for predicate in (RDFS.comment, SKOS.definition):
        texts = _texts(graph, iri, predicate)
        if texts:
            return texts[0]
    return ""


def _aliases(graph: Graph, iri: URIRef) -> tuple[str, ...]:
    name = _local_name(iri)
    labels = [t for p in (RDFS.label, SKOS.prefLabel, SKOS.altLabel) for t in _texts(graph, iri, p)]
    return tuple(dict.fromkeys(label for label in labels if label != name))


def _texts(graph: Graph, iri: URIRef, predicate: URIRef) -> list[str]:
    """The literals, English (or untagged) first, each once."""
    literals = list(graph.objects(iri, predicate))
    ordered = sorted(literals, key=lambda lit: (getattr(lit, "language", None) not in (None, "en"), str(lit)))
    return list(dict.fromkeys(" ".join(str(lit).split()) for lit in ordered if str(lit).strip()))


def _classes_of(graph: Graph, iri: URIRef, predicate: URIRef, class_key: dict) -> tuple[str, ...]:
    """The classes of a domain or range: named, or an owl:unionOf of named classes."""
    keys: list[str] = []
    for value in _objects(graph, iri, predicate):
        if isinstance(value, URIRef) and value in class_key:
            keys.append(class_key[value])
        elif isinstance(value, BNode):
            for union in graph.objects(value, OWL.unionOf):
                keys += [class_key[m] for m in Collection(graph, union) if m in class_key]
    return tuple(dict.fromkeys(keys))


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
