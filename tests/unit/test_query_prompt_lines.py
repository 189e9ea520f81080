"""The lines of the query prompt (seeds/query.md, step 3) and the parsing of its reply."""

from __future__ import annotations

from datetime import UTC, datetime

from query_helpers import T0

from gligabao.ai.prompts.query import QueryReply, edge_line, entity_line, passage_lines
from gligabao.model import Passage, StoredEdge, StoredEntity

ALICE = StoredEntity(1, "Alice", "person", "engineer")


ACME = StoredEntity(2, "Acme", "organization", "")


def edge(valid_at=None, invalid_at=None, description="Alice works at Acme.") -> StoredEdge:
    return StoredEdge(1, 1, 2, "works_at", description, None, valid_at, invalid_at, T0, None)


def test_entity_lines_have_the_seed_format():
    assert entity_line(ALICE) == "[entity 1] Alice (person): engineer"
    assert entity_line(ACME) == "[entity 2] Acme (organization)"


def test_edge_lines_have_the_seed_format_with_valid_at_and_invalid_at():
    ended = edge(datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 3, 1, tzinfo=UTC))
    assert edge_line(ended, "Alice", "Acme") == (
        "[edge 1] Alice(1) --works_at--> Acme(2): Alice works at Acme. "
        "[valid_at=2023-01-01T00:00:00Z, invalid_at=2024-03-01T00:00:00Z]"
    )
    live = edge(datetime(2023, 1, 1, tzinfo=UTC))
    assert edge_line(live, "Alice", "Acme") == (
        "[edge 1] Alice(1) --works_at--> Acme(2): Alice works at Acme. [valid_at=2023-01-01T00:00:00Z]"
    )
    assert edge_line(edge(description=""), "Alice", "Acme") == "[edge 1] Alice(1) --works_at--> Acme(2)"


def test_passage_lines_have_the_seed_format():
    assert passage_lines(Passage(14, 12, 3, "Alice joined Acme in 2023 and ...", "...the chunk...")) == [
        "[passage 14] chunk 3 of text 12",
        "summary: Alice joined Acme in 2023 and ...",
        "text: ...the chunk...",
    ]
    assert passage_lines(Passage(15, 12, 4, "a summary", None)) == [
        "[passage 15] chunk 4 of text 12",
        "summary: a summary",
    ]
    assert passage_lines(Passage(16, 12, 5, None, "a text")) == [
        "[passage 16] chunk 5 of text 12",
        "text: a text",
    ]


def test_reply_ids_are_read_tolerantly():
    reply = QueryReply.model_validate(
        {
            "answer": " Alice works at Acme. ",
            "entities": ["1", "entity 2", 3.0, None, "x", True],
            "edges": 1,
            "passages": None,
        }
    )

    assert (reply.answer, reply.entities, reply.edges, reply.passages) == (
        "Alice works at Acme.",
        [1, 2, 3],
        [1],
        [],
    )
