"""Step 3 of remember: one `extract` call per text or chunk, merged into one graph of the
entities and facts the text states, named and typed as the graph stores them."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from gligabao.ai.prompts.extract import EXTRACT_MAX_TOKENS, ChunkExtraction, Extraction, extract_prompt
from gligabao.ai.stages import level_for
from gligabao.limits import DEFAULT_LIMITS
from gligabao.memory.names import normalized_name
from gligabao.memory.temporal import fact_period, parse_fact_time
from gligabao.observability.inferences import CallContext

UNKNOWN_TYPE = "unknown"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
FALLBACK_RELATION = "related_to"


@dataclass
class TextEntity:
    """An entity the text names, once, whatever the chunks and spellings it appears in."""

    name: str
    normalized_name: str
    type: str
    description: str
    pieces: set[int] = field(default_factory=set)  # the chunks (or 0: the text) that name it

    @property
    def embedding_text(self) -> str:
        return f"{self.name} ({self.type}): {self.description}"


@dataclass
class TextFact:
    """A fact the text states: an edge between two of its entities."""

    source: TextEntity
    target: TextEntity
    relation: str
    description: str
    valid_at: datetime | None
    invalid_at: datetime | None
    pieces: set[int] = field(default_factory=set)

    @property
    def embedding_text(self) -> str:
        return f"{self.source.name} {self.relation} {self.target.name}: {self.description}"


@dataclass
class TextGraph:
    entities: list[TextEntity]
    facts: list[TextFact]
    summaries: list[str | None]  # per chunk; [] for an unchunked text


def extract(
    llm,
    call: CallContext,
    pieces: Sequence[str],
    *,
    chunked: bool,
    reference_time: datetime,
    now: datetime,
    reasoning: dict[str, str],
    models: dict[str, str],
    concurrency: int,
    deadline: float | None = None,
    ontology: str | None = None,
) -> list[Extraction]:
    """One extraction per piece (the whole text, or each chunk), chunks concurrently; `ontology`:
    the allowed types and relations, told to each call (memory/ontology.py, prompt_section)."""

    def extract_piece(index: int) -> Extraction:
        system, content = extract_prompt(
            pieces[index],
            reference_time=reference_time,
            current_time=now,
            chunk=(index, len(pieces)) if chunked else None,
            ontology=ontology,
        )
        return llm.complete(
            call,
            "extract",
            system=system,
            content=content,
            reply_model=ChunkExtraction if chunked else Extraction,
            reasoning=level_for(reasoning, "extract"),
            model=models.get("extract"),
            max_tokens=EXTRACT_MAX_TOKENS,
            deadline=deadline,
        )

    if len(pieces) == 1:
        return [extract_piece(0)]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(pieces))) as pool:
        return list(pool.map(extract_piece, range(len(pieces))))


def merge_extractions(
    extractions: Sequence[Extraction],
    reference_time: datetime,
    *,
    name_max_chars: int = DEFAULT_LIMITS.entity_name_max_chars,
) -> TextGraph:
    """The entities and facts of all pieces, each once: entities by normalized name, facts by
    (source, target, relation). An edge naming an entity the extraction did not list creates it.
    A name longer than `name_max_chars` is cut there (no name is that long: a model wrote
    something else into it; and a name must fit the database's index of names)."""
    entities: dict[str, TextEntity] = {}
    facts: dict[tuple[str, str, str], TextFact] = {}

    def entity(name: str, type_: str, description: str, piece: int) -> TextEntity | None:
        name = " ".join(name.split())[:name_max_chars].rstrip()
        key = normalized_name(name)[:name_max_chars]  # NFKC may lengthen it (U+FDFA: 18 characters)
        if not key:
            return None
        found = entities.get(key)
        if found is None:
            found = entities[key] = TextEntity(name, key, UNKNOWN_TYPE, "")
        if found.type == UNKNOWN_TYPE:
            found.type = entity_type(type_)
        if not found.description:
            found.description = description.strip()
        found.pieces.add(piece)
        return found

    for piece, extraction in enumerate(extractions):
        for listed in extraction.entities:
            entity(clean_text(listed.name), clean_text(listed.type), clean_text(listed.description), piece)
        for edge in extraction.edges:
            if not normalized_name(clean_text(edge.source)) or not normalized_name(clean_text(edge.target)):
                continue  # a fact without both ends creates neither end
            source = entity(clean_text(edge.source), UNKNOWN_TYPE, "", piece)
            target = entity(clean_text(edge.target), UNKNOWN_TYPE, "", piece)
            relation = relation_name(edge.relation)
            description = clean_text(edge.description).strip()
            valid_at, invalid_at = fact_period(
                parse_fact_time(edge.valid_at), parse_fact_time(edge.invalid_at), reference_time
            )
            key = (source.normalized_name, target.normalized_name, relation)
            fact = facts.get(key)
            if fact is None:
                fact = facts[key] = TextFact(source, target, relation, description, valid_at, invalid_at)
            else:  # the same fact in two chunks (their overlap): keep what either says
                fact.description = fact.description or description
                fact.invalid_at = fact.invalid_at or invalid_at
            fact.pieces.add(piece)
    summaries = (
        [_summary(e) for e in extractions]
        if extractions and isinstance(extractions[0], ChunkExtraction)
        else []
    )
    return TextGraph(list(entities.values()), list(facts.values()), summaries)


def entity_type(value: str) -> str:
    """Types are lowercase words: 'Organization' -> 'organization', '' -> 'unknown'."""
    return " ".join(re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", value).lower())) or UNKNOWN_TYPE


def relation_name(value: str) -> str:
    """Relations are lowercase snake_case ASCII verb phrases: 'Works At' -> 'works_at'."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    return "_".join(words) or FALLBACK_RELATION


def _summary(extraction: Extraction) -> str | None:
    summary = clean_text(getattr(extraction, "summary", "")).strip()
    return summary or None


def clean_text(text: str) -> str:
    """A model's string without control characters (NUL, which PostgreSQL text cannot hold,
    escapes that would reach terminals and prompts); tabs and line breaks stay."""
    return _CONTROL.sub("", text)
