"""The rules of conforming an extracted graph to an ontology (memory/ontology.py), and of reading
OWL RDF/XML (memory/owl.py): pure, no database, no model."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from gligabao.ai.prompts.extract import Extraction
from gligabao.memory.extraction import merge_extractions
from gligabao.memory.ontology import (
    EntityType,
    EntityTypeForm,
    InvalidOntology,
    Ontology,
    RelationType,
    build_ontology,
    conform,
    prompt_section,
    relation_key,
    squashed,
)
from gligabao.memory.owl import check_document, parse_owl

NOW = datetime(2025, 1, 31, tzinfo=UTC)
OWL_HEAD = (
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" xmlns:owl="http://www.w3.org/2002/07/owl#" '
    'xmlns:skos="http://www.w3.org/2004/02/skos/core#">'
)


def people(out_of_ontology: str = "map") -> Ontology:
    return build_ontology(
        "people",
        [
            EntityType("Person", "person", "a human being"),
            EntityType("Employee", "employee", "a person employed", parents=("person",)),
            EntityType("Organization", "organization", "a company", aliases=("Firm",)),
            EntityType("Place", "place", "a city"),
        ],
        [
            RelationType("worksFor", "works_for", "employment", ("person",), ("organization",)),
            RelationType("livesIn", "lives_in", "home", ("person",), ("place",)),
            RelationType("knows", "knows", "acquaintance", ("person",), ("person",)),
            RelationType("likes", "likes", "fondness", ("person",), ("person",)),
        ],
        out_of_ontology,
        max_types=10,
    )


def graph(entities, edges=()):
    extraction = Extraction.model_validate(
        {
            "entities": [{"name": n, "type": t} for n, t in entities],
            "edges": [{"source": s, "target": t, "relation": r} for s, r, t in edges],
        }
    )
    return merge_extractions([extraction], NOW)


class CountingEmbed:
    """Embeds by shared words (a bag of words), and counts its requests."""

    def __init__(self):
        self.requests: list[list[str]] = []

    def __call__(self, texts):
        self.requests.append(list(texts))
        words = [set(re.findall(r"[a-z]+", t.lower())) for t in texts]
        vocabulary = sorted(set().union(*words))
        return [[float(w in these) for w in vocabulary] for these in words]


def test_names_match_whatever_their_case_underscores_and_spaces():
    assert squashed("works_for") == squashed("worksFor") == squashed("Works For")
    assert relation_key("worksFor") == "works_for"
    assert relation_key("PlaceOfBirth") == "place_of_birth"


def test_allowed_names_and_aliases_need_no_embedding():
    embed = CountingEmbed()
    g, counts = conform(
        graph([("Alice", "Person"), ("Acme", "firm")], [("Alice", "worksFor", "Acme")]), people(), embed
    )

    assert [(e.name, e.type) for e in g.entities] == [("Alice", "person"), ("Acme", "organization")]
    assert [f.relation for f in g.facts] == ["works_for"]
    assert (counts.mapped_entity_types, counts.mapped_relations) == (1, 0)  # firm, an alias
    assert embed.requests == []


def test_a_subclass_fits_its_parents_domain():
    g, counts = conform(
        graph([("Bob", "employee"), ("Acme", "organization")], [("Bob", "works_for", "Acme")]), people()
    )

    assert [f.relation for f in g.facts] == ["works_for"]
    assert counts.dropped_relations == 0


def test_an_untyped_entity_takes_the_type_its_allowed_relation_implies():
    g, _ = conform(graph([("Alice", "person")], [("Alice", "lives_in", "Paris")]), people("drop"))

    assert {e.name: e.type for e in g.entities} == {"Alice": "person", "Paris": "place"}


def test_one_fitting_relation_is_the_nearest_without_embedding():
    embed = CountingEmbed()
    g, counts = conform(
        graph([("Alice", "person"), ("Acme", "organization")], [("Alice", "employed_by", "Acme")]),
        people(),
        embed,
    )

    assert [f.relation for f in g.facts] == ["works_for"]
    assert counts.mapped_relations == 1
    assert embed.requests == []


def test_several_fitting_relations_are_told_apart_by_one_embeddings_request():
    embed = CountingEmbed()
    g, counts = conform(
        graph(
            [("Alice", "person"), ("Bob", "person"), ("Acme", "company")],
            [("Alice", "acquaintance_of", "Bob"), ("Alice", "employed_by", "Acme")],
        ),
        people(),
        embed,
    )

    assert {f.relation for f in g.facts} == {"knows", "works_for"}
    assert {e.name: e.type for e in g.entities}["Acme"] == "organization"  # "company" is near "a company"
    assert counts.mapped_relations == 2 and counts.mapped_entity_types == 1
    assert len(embed.requests) == 1


def test_drop_mode_drops_outside_types_and_their_facts_without_embedding():
    embed = CountingEmbed()
    g, counts = conform(
        graph(
            [("Alice", "person"), ("Rex", "animal")], [("Alice", "owns", "Rex"), ("Alice", "knows", "Alice")]
        ),
        people("drop"),
        embed,
    )

    assert [e.name for e in g.entities] == ["Alice"]
    assert [f.relation for f in g.facts] == ["knows"]
    assert (counts.dropped_entities, counts.dropped_relations) == (1, 1)
    assert embed.requests == []


def test_a_relation_whose_ends_do_not_fit_is_dropped_when_no_other_fits():
    g, counts = conform(
        graph([("Acme", "organization"), ("Alice", "person")], [("Acme", "works_for", "Alice")]), people()
    )

    assert g.facts == [] and counts.dropped_relations == 1


def test_two_facts_mapped_onto_one_are_kept_once():
    g, counts = conform(
        graph(
            [("Alice", "person"), ("Acme", "organization")],
            [("Alice", "works_for", "Acme"), ("Alice", "employed_by", "Acme")],
        ),
        people(),
    )

    assert [f.relation for f in g.facts] == ["works_for"]
    assert counts.mapped_relations == 1


def test_the_prompt_section_lists_types_and_relations_with_domain_and_range():
    section = prompt_section(people())

    assert "- person: a human being" in section
    assert "- works_for (person -> organization): employment" in section


def test_an_ontology_must_declare_what_it_names():
    with pytest.raises(InvalidOntology, match="range 'org' is not declared"):
        build_ontology(
            "x", [EntityType("P", "p")], [RelationType("r", "r", range=("org",))], "map", max_types=5
        )
    with pytest.raises(InvalidOntology, match="at most 1 entity types"):
        build_ontology("x", [EntityType("P", "p"), EntityType("Q", "q")], [], "map", max_types=1)


def test_owl_labels_are_aliases_subclasses_are_parents_and_a_union_is_a_domain():
    document = (
        OWL_HEAD
        + '<owl:Class rdf:about="http://x/Person"/>'
        + '<owl:Class rdf:about="http://x/Robot"><skos:altLabel>Android</skos:altLabel></owl:Class>'
        + '<owl:Class rdf:about="http://x/Employee"><rdfs:subClassOf rdf:resource="http://x/Person"/>'
        + "<rdfs:label>Staff</rdfs:label></owl:Class>"
        + '<owl:ObjectProperty rdf:about="http://x/knows"><rdfs:domain><owl:Class><owl:unionOf '
        + 'rdf:parseType="Collection"><owl:Class rdf:about="http://x/Person"/>'
        + '<owl:Class rdf:about="http://x/Robot"/></owl:unionOf></owl:Class></rdfs:domain></owl:ObjectProperty>'
        + "</rdf:RDF>"
    )

    parsed = parse_owl("x", document, "map", max_types=10)

    types = {t.key: t for t in parsed.entity_types}
    assert types["employee"].parents == ("person",) and types["employee"].aliases == ("Staff",)
    assert types["robot"].aliases == ("Android",)
    [knows] = parsed.relation_types
    assert set(knows.domain) == {"person", "robot"} and knows.range == ()


@pytest.mark.parametrize(
    ("document", "refusal"),
    [
        ('<!DOCTYPE r SYSTEM "http://127.0.0.1:9/x.dtd"><r/>', "external DTD"),
        ('<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><r>&e;</r>', "external entity"),
        ('<!DOCTYPE r [<!ENTITY % p "x">]><r/>', "parameter entity"),
        ('<!DOCTYPE r [<!ENTITY a "x"><!ENTITY b "&a;&a;">]><r/>', "nested entities"),
        ('<!DOCTYPE r [<!ENTITY a "' + "x" * 2000 + '">]><r/>', "longer than"),
        ("<!DOCTYPE r [<!ENTITY>]><r/>", "not well-formed"),
        ("", "not well-formed"),
    ],
)
def test_the_prolog_check_refuses_what_could_reach_out_or_blow_up(document, refusal):
    with pytest.raises(InvalidOntology, match=refusal):
        check_document(document)


def test_plain_internal_entities_are_allowed_as_protege_writes_them():
    check_document('<!DOCTYPE r [<!ENTITY owl "http://www.w3.org/2002/07/owl#">]><r a="&owl;Class"/>')


def test_a_deep_or_cyclic_hierarchy_fits_its_ancestors_and_ends():
    depth = 500
    chain = [
        EntityType(f"T{i}", f"t{i}", parents=(f"t{i - 1}",) if i else (f"t{depth - 1}",))
        for i in range(depth)
    ]
    ontology = build_ontology(
        "deep", chain, [RelationType("r", "r", domain=("t0",), range=("t0",))], "map", max_types=depth
    )

    g, counts = conform(graph([("A", "t499"), ("B", "t250")], [("A", "r", "B")]), ontology)

    assert [f.relation for f in g.facts] == ["r"]  # t499 -> ... -> t0 (and round again: a cycle)
    assert counts.dropped_relations == 0


def test_an_owl_list_that_loops_is_refused_naming_where_it_is():
    document = (
        OWL_HEAD
        + '<owl:Class rdf:about="http://x/Person"/>'
        + '<owl:ObjectProperty rdf:about="http://x/knows"><rdfs:range><owl:Class>'
        + '<owl:unionOf rdf:nodeID="a"/></owl:Class></rdfs:range></owl:ObjectProperty>'
        + '<rdf:Description rdf:nodeID="a"><rdf:first rdf:resource="http://x/Person"/><rdf:rest rdf:nodeID="b"/>'
        + '</rdf:Description><rdf:Description rdf:nodeID="b"><rdf:rest rdf:nodeID="a"/></rdf:Description>'
        + "</rdf:RDF>"
    )

    with pytest.raises(InvalidOntology, match=r"owl:unionOf of rdfs:range of 'http://x/knows'.*loops back"):
        parse_owl("x", document, "map", max_types=10)


@pytest.mark.parametrize(
    ("local_name", "inside", "json_form"),
    [
        ("P" * 101, "", {"name": "P" * 101}),
        ("Per\u0080son", "", {"name": "Per\u0080son"}),
        ("Person", "<rdfs:label>" + "y" * 101 + "</rdfs:label>", {"name": "Person", "aliases": ["y" * 101]}),
        ("Person", "<skos:altLabel>-</skos:altLabel>", {"name": "Person", "aliases": ["-"]}),
        (
            "Person",
            "".join(f"<rdfs:label>L{i}</rdfs:label>" for i in range(51)),
            {"name": "Person", "aliases": [f"L{i}" for i in range(51)]},
        ),
        (
            "Person",
            "<rdfs:comment>" + "x" * 1001 + "</rdfs:comment>",
            {"name": "Person", "description": "x" * 1001},
        ),
        (
            "Person",
            "<skos:definition>a\u009bb</skos:definition>",
            {"name": "Person", "description": "a\u009bb"},
        ),
        # NEL is a space to str.split() too: collapsing it would let it past the rule
        ("Person", "<rdfs:label>Hu\u0085man</rdfs:label>", {"name": "Person", "aliases": ["Hu\u0085man"]}),
    ],
)
def test_the_owl_form_refuses_what_the_json_form_refuses_with_the_same_rule(local_name, inside, json_form):
    with pytest.raises(ValidationError) as refused:
        EntityTypeForm.model_validate(json_form)
    rule = refused.value.errors()[0]["msg"].removeprefix("Value error, ")
    document = OWL_HEAD + f'<owl:Class rdf:about="http://x/{local_name}">{inside}</owl:Class></rdf:RDF>'

    with pytest.raises(InvalidOntology) as owl_refused:
        parse_owl("x", document, "map", max_types=10)

    assert rule in str(owl_refused.value) and "class 'http://x/" in str(owl_refused.value)


def test_an_owl_label_or_comment_that_is_no_literal_is_no_text():
    document = (
        OWL_HEAD
        + '<owl:Class rdf:about="http://x/Person"><rdfs:label rdf:resource="http://x/Human"/>'
        + "<rdfs:comment><rdf:Description/></rdfs:comment><rdfs:label>Human</rdfs:label></owl:Class>"
        + "</rdf:RDF>"
    )

    [person] = parse_owl("x", document, "map", max_types=10).entity_types

    assert person.aliases == ("Human",) and person.description == ""
