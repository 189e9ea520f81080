"""Step 3 of remember, after the extract calls (SPEC section 5): the replies of every piece (the
text, or each chunk) merged into one graph: entities once by normalized name, facts once by
(source, target, relation), named and typed as the graph stores them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gligabao.ai.prompts.extract import ChunkExtraction, Extraction
from gligabao.memory.extraction import entity_type, merge_extractions, relation_name

REFERENCE_TIME = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)


WHOLE_TEXT = object()


def piece(entities=(), edges=(), summary=WHOLE_TEXT) -> Extraction:
    """The reply of one extract call as the model writes it: of a chunk when it has a summary."""
    reply = {"entities": list(entities), "edges": list(edges)}
    if summary is WHOLE_TEXT:
        return Extraction.model_validate(reply)
    return ChunkExtraction.model_validate({**reply, "summary": summary})


def entity(name, type_="person", description=""):
    return {"name": name, "type": type_, "description": description}


def edge(source, relation, target, description="", valid_at=None, invalid_at=None):
    return {
        "source": source,
        "target": target,
        "relation": relation,
        "description": description,
        "valid_at": valid_at,
        "invalid_at": invalid_at,
    }


def by_name(graph) -> dict:
    return {e.normalized_name: e for e in graph.entities}


def triples(graph) -> list[tuple[str, str, str]]:
    return [(f.source.name, f.relation, f.target.name) for f in graph.facts]


def test_entities_are_merged_by_normalized_name_across_chunks():
    graph = merge_extractions(
        [
            piece([entity("Alice", "person", "engineer"), entity("Acme", "organization")]),
            piece([entity("  ALICE ", "person"), entity("Paris", "place")]),
            piece([entity("alice", "Person"), entity("ACME  ", "Organization")]),
        ],
        REFERENCE_TIME,
    )

    assert [(e.name, e.normalized_name, e.type) for e in graph.entities] == [
        ("Alice", "alice", "person"),  # the first spelling is the name
        ("Acme", "acme", "organization"),
        ("Paris", "paris", "place"),
    ]
    entities = by_name(graph)
    assert entities["alice"].pieces == {0, 1, 2}
    assert entities["acme"].pieces == {0, 2}
    assert entities["paris"].pieces == {1}
    assert entities["alice"].description == "engineer"


def test_inner_whitespace_of_a_name_is_collapsed_and_the_same_entity_is_found():
    graph = merge_extractions(
        [piece([entity("New   York", "place")]), piece([entity("new york", "place", "a city")])],
        REFERENCE_TIME,
    )

    [new_york] = graph.entities
    assert (new_york.name, new_york.normalized_name, new_york.description) == (
        "New York",
        "new york",
        "a city",
    )
    assert new_york.pieces == {0, 1}


def test_an_entity_keeps_the_first_type_and_description_given_filling_in_the_missing_ones():
    graph = merge_extractions(
        [
            piece([entity("Alice", None, None)]),  # the model left both empty
            piece([entity("Alice", "person", "engineer")]),
            piece([entity("Alice", "organization", "a company")]),
        ],
        REFERENCE_TIME,
    )

    [alice] = graph.entities
    assert (alice.type, alice.description) == ("person", "engineer")


def test_an_edge_naming_an_unlisted_entity_creates_it_with_type_unknown():
    graph = merge_extractions(
        [piece([entity("Alice", "person", "engineer")], [edge("Alice", "works_at", "Acme")])], REFERENCE_TIME
    )

    entities = by_name(graph)
    assert list(entities) == ["alice", "acme"]
    assert (entities["acme"].name, entities["acme"].type, entities["acme"].description) == (
        "Acme",
        "unknown",
        "",
    )
    assert entities["acme"].pieces == {0}
    assert triples(graph) == [("Alice", "works_at", "Acme")]
    assert graph.facts[0].target is entities["acme"]


def test_an_entity_first_named_by_an_edge_takes_the_type_a_later_chunk_lists():
    graph = merge_extractions(
        [
            piece([entity("Alice")], [edge("Alice", "works_at", "Acme")]),
            piece([entity("Acme", "organization", "a company")]),
        ],
        REFERENCE_TIME,
    )

    acme = by_name(graph)["acme"]
    assert (acme.type, acme.description, acme.pieces) == ("organization", "a company", {0, 1})


def test_an_edge_with_a_blank_source_or_target_is_dropped():
    graph = merge_extractions(
        [piece([entity("Alice")], [edge("Alice", "works_at", "  "), edge("", "lives_in", "Alice")])],
        REFERENCE_TIME,
    )

    assert [e.name for e in graph.entities] == ["Alice"]  # no entity of a blank name
    assert graph.facts == []


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("works_at", "works_at"),
        ("Works At", "works_at"),
        ("lives-in", "lives_in"),
        ("  WORKS   AT  ", "works_at"),
        ("café owner of", "cafe_owner_of"),
        ("joined (2023)", "joined_2023"),
        ("", "related_to"),
        ("—", "related_to"),
    ],
)
def test_relation_names_are_snake_cased_lowercase_ascii(said, stored):
    assert relation_name(said) == stored

    graph = merge_extractions([piece([], [edge("Alice", said, "Acme")])], REFERENCE_TIME)
    assert [f.relation for f in graph.facts] == [stored]


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("person", "person"),
        ("Organization", "organization"),
        ("  Place ", "place"),
        ("Programming_Language", "programming language"),
        ("", "unknown"),
        ("???", "unknown"),
    ],
)
def test_types_are_lowercase_words(said, stored):
    assert entity_type(said) == stored

    graph = merge_extractions([piece([entity("Alice", said)])], REFERENCE_TIME)
    assert [e.type for e in graph.entities] == [stored]


def test_facts_are_merged_by_source_target_and_relation():
    graph = merge_extractions(
        [
            piece([entity("Alice"), entity("Acme", "organization")], [edge("Alice", "works_at", "Acme")]),
            piece([], [edge("ALICE", "Works At", "acme", "Alice works at Acme.")]),
            piece([], [edge("Alice", "founded", "Acme"), edge("Acme", "works_at", "Alice")]),
        ],
        REFERENCE_TIME,
    )

    assert triples(graph) == [
        ("Alice", "works_at", "Acme"),
        ("Alice", "founded", "Acme"),  # another relation: another fact
        ("Acme", "works_at", "Alice"),  # the other direction: another fact
    ]
    works_at = graph.facts[0]
    assert works_at.pieces == {0, 1}
    assert works_at.description == "Alice works at Acme."  # the first piece said none


def test_a_fact_stated_twice_keeps_the_first_description_and_the_first_end_given():
    graph = merge_extractions(
        [
            piece([], [edge("Alice", "works_at", "Acme", "Alice works at Acme.", valid_at="2020-01-01")]),
            piece([], [edge("Alice", "works_at", "Acme", "Alice is at Acme.", invalid_at="2024-01-01")]),
            piece([], [edge("Alice", "works_at", "Acme", "", invalid_at="2025-01-01")]),
        ],
        REFERENCE_TIME,
    )

    [fact] = graph.facts
    assert fact.description == "Alice works at Acme."
    assert fact.valid_at == datetime(2020, 1, 1, tzinfo=UTC)
    assert fact.invalid_at == datetime(2024, 1, 1, tzinfo=UTC)
    assert fact.pieces == {0, 1, 2}


def test_fact_times_follow_the_temporal_rules():
    graph = merge_extractions(
        [
            piece(
                [],
                [
                    edge("Alice", "works_at", "Acme"),
                    edge("Alice", "joined", "Acme", valid_at="2023-01-01T00:00:00Z"),
                    edge("Bob", "works_at", "Globex", invalid_at="2020-01-01"),
                    edge("Alice", "lives_in", "Paris", valid_at="sometime in spring"),
                ],
            )
        ],
        REFERENCE_TIME,
    )

    assert [(f.valid_at, f.invalid_at) for f in graph.facts] == [
        (REFERENCE_TIME, None),  # no time given: from the text's reference time
        (datetime(2023, 1, 1, tzinfo=UTC), None),
        (None, datetime(2020, 1, 1, tzinfo=UTC)),  # ended before the text: start unknown
        (REFERENCE_TIME, None),  # an unreadable time is dropped, the fact kept
    ]


def test_nul_characters_are_dropped_from_names_types_descriptions_and_relations():
    graph = merge_extractions(
        [
            piece(
                [entity("Al\x00ice", "per\x00son", "engi\x00neer")],
                [edge("Alice", "works\x00_at", "Ac\x00me", "Alice works\x00 at Acme.")],
            )
        ],
        REFERENCE_TIME,
    )

    assert [(e.name, e.type, e.description) for e in graph.entities] == [
        ("Alice", "person", "engineer"),
        ("Acme", "unknown", ""),
    ]
    assert [(f.relation, f.description) for f in graph.facts] == [("works_at", "Alice works at Acme.")]


def test_summaries_are_kept_per_chunk_and_only_for_chunks():
    chunked = merge_extractions(
        [
            piece(summary=" Alice joined Acme. "),
            piece(summary=""),
            piece(summary=None),
            piece(summary="Alice left."),
        ],
        REFERENCE_TIME,
    )
    whole = merge_extractions([piece([entity("Alice")])], REFERENCE_TIME)

    assert chunked.summaries == ["Alice joined Acme.", None, None, "Alice left."]
    assert whole.summaries == []


def test_nothing_extracted_is_an_empty_graph():
    graph = merge_extractions([piece()], REFERENCE_TIME)

    assert (graph.entities, graph.facts, graph.summaries) == ([], [], [])


def test_embedding_texts_name_the_entity_and_the_fact():
    graph = merge_extractions(
        [
            piece(
                [entity("Alice", "person", "engineer"), entity("Acme", "organization")],
                [edge("Alice", "works_at", "Acme", "Alice works at Acme.")],
            )
        ],
        REFERENCE_TIME,
    )

    assert [e.embedding_text for e in graph.entities] == ["Alice (person): engineer", "Acme (organization): "]
    assert graph.facts[0].embedding_text == "Alice works_at Acme: Alice works at Acme."


def test_a_fact_without_both_ends_creates_neither_end():
    graph = merge_extractions(
        [piece([], [edge("", "works_at", "Acme"), edge("Bob", "lives_in", " ")])], REFERENCE_TIME
    )

    assert graph.entities == []
    assert graph.facts == []


def test_a_name_longer_than_200_characters_is_cut_there_and_its_facts_kept():
    endless = "Alice " + "x" * 10_000
    graph = merge_extractions([piece([entity(endless)], [edge(endless, "works_at", "Acme")])], REFERENCE_TIME)

    [alice, acme] = graph.entities
    assert alice.name == endless[:200] and len(alice.normalized_name) == 200
    assert triples(graph) == [(endless[:200], "works_at", "Acme")]
    assert acme.name == "Acme"


def test_a_name_that_grows_under_normalization_is_compared_on_200_characters():
    # NFKC turns U+FDFA into 18 characters: the normalized name must stay within the index.
    graph = merge_extractions([piece([entity("\ufdfa" * 200)])], REFERENCE_TIME)

    [entity_] = graph.entities
    assert len(entity_.name) == 200 and len(entity_.normalized_name) == 200


def test_control_characters_are_removed_from_what_the_model_wrote():
    graph = merge_extractions(
        [
            piece(
                [entity("Al\x01i\x07ce\x1b", "per\x00son", "an engi\x7fneer")],
                [edge("Alice", "works_at", "Ac\x9bme", "Alice works\x08 at Acme.")],
            )
        ],
        REFERENCE_TIME,
    )

    assert [(e.name, e.type, e.description) for e in graph.entities] == [
        ("Alice", "person", "an engineer"),
        ("Acme", "unknown", ""),
    ]
    assert graph.facts[0].description == "Alice works at Acme."


@pytest.mark.parametrize("name", ["", "   ", "\x00", "\x01\x02", "\n\t"])
def test_a_name_with_nothing_printable_is_no_entity_and_its_facts_are_dropped(name):
    graph = merge_extractions(
        [piece([entity(name), entity("Acme")], [edge(name, "works_at", "Acme")])], REFERENCE_TIME
    )

    assert [e.name for e in graph.entities] == ["Acme"]
    assert graph.facts == []
