"""Stage `extract`: a text (or one chunk of a long text) into entities and bi-temporal facts.

The reply models are tolerant of what a model may leave empty (a null description, a
missing type): such gaps are filled with defaults rather than failing the whole remember.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field

from gligabao.timefmt import rfc3339

EXTRACT_MAX_TOKENS = 8192


def _none_as(default: Any):
    return BeforeValidator(lambda value: default if value is None else value)


class ExtractedEntity(BaseModel):
    name: str
    type: Annotated[str, _none_as("unknown")] = "unknown"
    description: Annotated[str, _none_as("")] = ""


class ExtractedEdge(BaseModel):
    source: str
    target: str
    relation: str
    description: Annotated[str, _none_as("")] = ""
    valid_at: str | None = None
    invalid_at: str | None = None


class Extraction(BaseModel):
    """The reply for a whole (unchunked) text."""

    entities: Annotated[list[ExtractedEntity], _none_as([])] = Field(default_factory=list)
    edges: Annotated[list[ExtractedEdge], _none_as([])] = Field(default_factory=list)


class ChunkExtraction(Extraction):
    """The reply for one chunk of a long text: the same, plus the chunk's summary."""

    summary: Annotated[str, _none_as("")]


_REPLY_SHAPE = """{"entities": [{"name": "Alice", "type": "person", "description": "engineer"}],
 "edges": [{"source": "Alice", "target": "Acme", "relation": "works_at",
            "description": "Alice works at Acme.", "valid_at": "2023-01-01T00:00:00Z", "invalid_at": null}]%s}"""

_RULES = """You turn a text into a knowledge graph for a long-term memory: the entities it mentions and
the facts it states about them. Answer with only a JSON object, no prose, in this shape:

%s

Entities
- Every person, organization, place, event, object or concept the text states a fact about.
- name: the entity's fullest name as written in the text ("Alice Martin", not "she" or "her").
  One entity once, even when the text names it several ways.
- type: one lowercase word: person, organization, place, event, object, concept, or another
  single lowercase word when none of these fits.
- description: one short phrase of what the text says the entity is; "" when it says nothing.

Edges (facts)
- One edge per fact the text states between two entities. source and target are entity names
  exactly as written in "entities"; list every entity an edge names.
- relation: a lowercase snake_case verb phrase in the present tense: works_at, lives_in,
  is_married_to, founded, owns. Use the same relation for the same kind of fact.
- description: the fact as one plain sentence.
- valid_at: when the fact began to hold, as ISO 8601 with a time zone (2023-01-01T00:00:00Z), if
  the text says. Resolve relative times ("last week", "two years ago", "since Monday") against the
  reference time. null when the text does not say when: do not use the reference time itself.
- invalid_at: when the fact stopped holding, same format, only if the text says it ended ("Alice
  left Acme in March 2024"); null otherwise. A fact that ended is still an edge, with invalid_at.
- Only what the text states: no guesses, no general knowledge, no fact twice.%s"""

_SUMMARY_RULE = """

Summary
- summary: two or three sentences saying what this chunk is about, naming its main entities.
  The chunk is part of a longer text: extract only what this chunk states."""

EXTRACT_SYSTEM = _RULES % (_REPLY_SHAPE % "", "")
EXTRACT_CHUNK_SYSTEM = _RULES % (
    _REPLY_SHAPE % ',\n "summary": "Alice, an engineer, works at Acme."',
    _SUMMARY_RULE,
)


def extract_prompt(
    text: str,
    *,
    reference_time: datetime,
    current_time: datetime,
    chunk: tuple[int, int] | None = None,
    ontology: str | None = None,
) -> tuple[str, str]:
    """(system, content) of one extraction call; `chunk` is (index from 0, count) for a chunk;
    `ontology`: the types and relations the dataset allows (memory/ontology.py, prompt_section),
    in the content, so that the instructions (and their fingerprint) stay those of every text."""
    lines = [
        f"<reference_time>{rfc3339(reference_time)}</reference_time>",
        f"<current_time>{rfc3339(current_time)}</current_time>",
    ]
    if chunk is not None:
        lines.append(f"<chunk>{chunk[0] + 1} of {chunk[1]}</chunk>")
    if ontology:
        lines += ["<ontology>", ontology, "</ontology>"]
    lines += ["<text>", text, "</text>"]
    return (EXTRACT_CHUNK_SYSTEM if chunk is not None else EXTRACT_SYSTEM), "\n".join(lines)


def _fingerprint() -> str:
    """A short digest of what an unchunked text's extraction asks the model: its instructions and
    the layout of its content. A text extracted ahead (memory/prepare_ahead.py) records it, so
    that a deploy that changes the prompt leaves the texts extracted with the old one unused."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    system, content = extract_prompt("{text}", reference_time=epoch, current_time=epoch)
    return hashlib.sha256(f"{system}\0{content}".encode()).hexdigest()[:12]


EXTRACT_PROMPT_FINGERPRINT = _fingerprint()
