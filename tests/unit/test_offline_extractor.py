"""The offline extractor (ai/offline/sentences.py) on plain sentences: the facts a careful reader
finds, their dates against the reference time, and nothing from what it has no rule for."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gligabao.ai.offline.dates import parse_date
from gligabao.ai.offline.sentences import extract_sentences

SAID = datetime(2026, 6, 15, 10, 0, tzinfo=UTC)


def facts(text: str) -> list[tuple]:
    extraction = extract_sentences(text, SAID)
    return [(e.source, e.relation, e.target, e.valid_at, e.invalid_at) for e in extraction.edges]


def types(text: str) -> dict[str, str]:
    return {entity.name: entity.type for entity in extract_sentences(text, SAID).entities}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Alice works at Acme and lives in Paris.",
            [("Alice", "works_at", "Acme", None, None), ("Alice", "lives_in", "Paris", None, None)],
        ),
        ("Bob is married to Carol.", [("Bob", "married_to", "Carol", None, None)]),
        ("Dana was born in Madrid in 1990.", [("Dana", "born_in", "Madrid", "1990-01-01T00:00:00Z", None)]),
        ("Erin moved to Lyon in March 2024.", [("Erin", "lives_in", "Lyon", "2024-03-01T00:00:00Z", None)]),
        ("Frank left Initech last year.", [("Frank", "works_at", "Initech", None, "2025-01-01T00:00:00Z")]),
        ("Gus no longer works at Hooli.", [("Gus", "works_at", "Hooli", None, "2026-06-15T10:00:00Z")]),
        (
            "Hana worked at IBM from 2010 to 2015.",
            [("Hana", "works_at", "IBM", "2010-01-01T00:00:00Z", "2015-01-01T00:00:00Z")],
        ),
        ("In 2019, Ivan joined Globex.", [("Ivan", "works_at", "Globex", "2019-01-01T00:00:00Z", None)]),
        (
            "Jo moved from Paris to Rome two years ago.",
            [
                ("Jo", "lives_in", "Paris", None, "2024-01-01T00:00:00Z"),
                ("Jo", "lives_in", "Rome", "2024-01-01T00:00:00Z", None),
            ],
        ),
        (
            "Kim and Lee live in Oslo.",
            [("Kim", "lives_in", "Oslo", None, None), ("Lee", "lives_in", "Oslo", None, None)],
        ),
        ("Mia is the CTO of Pied Piper.", [("Mia", "works_at", "Pied Piper", None, None)]),
        ("Lyon is a city in France.", [("Lyon", "located_in", "France", None, None)]),
    ],
)
def test_a_sentence_yields_its_facts_and_their_dates(text, expected):
    assert facts(text) == expected


def test_a_pronoun_is_the_person_last_spoken_of_and_i_is_the_user():
    assert facts("Nora works at Acme. She moved to Berlin on 3 May 2021.") == [
        ("Nora", "works_at", "Acme", None, None),
        ("Nora", "lives_in", "Berlin", "2021-05-03T00:00:00Z", None),
    ]
    assert facts("User: I'm married to Sam and I live in Porto.\nAssistant: Porto is lovely!") == [
        ("User", "married_to", "Sam", None, None),
        ("User", "lives_in", "Porto", None, None),
    ]


def test_a_supersession_cue_stays_in_the_facts_description():
    [edge] = extract_sentences("Alice now works at Globex.", SAID).edges
    assert edge.description == "Alice now works at Globex."


def test_types_come_from_the_relation_and_from_organisation_words():
    assert types("Omar works at Acme Corp and lives in Cairo.") == {
        "Omar": "person",
        "Acme Corp": "organization",
        "Cairo": "place",
    }
    assert types("Priya is an engineer.") == {"Priya": "person"}
    assert extract_sentences("Priya is an engineer.", SAID).entities[0].description == "engineer"


@pytest.mark.parametrize(
    "text",
    [
        "Does Alice work at Acme?",
        "Alice does not work at Acme.",
        "The weather is nice today.",
        "She works at Acme.",  # no one to point to
        "Assistant: Alice works at Acme.",
        "",
    ],
)
def test_what_it_has_no_rule_for_yields_no_fact(text):
    assert facts(text) == []


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("2021", datetime(2021, 1, 1, tzinfo=UTC)),
        ("March 2024", datetime(2024, 3, 1, tzinfo=UTC)),
        ("3 May 2021", datetime(2021, 5, 3, tzinfo=UTC)),
        ("May 3rd, 2021", datetime(2021, 5, 3, tzinfo=UTC)),
        ("2022-11-30", datetime(2022, 11, 30, tzinfo=UTC)),
        ("yesterday", datetime(2026, 6, 14, tzinfo=UTC)),
        ("last month", datetime(2026, 5, 1, tzinfo=UTC)),
        ("three months ago", datetime(2026, 3, 1, tzinfo=UTC)),
        ("31 February 2020", None),
        ("soon", None),
    ],
)
def test_dates_are_read_against_the_reference_time(phrase, expected):
    assert parse_date(phrase, SAID) == expected
