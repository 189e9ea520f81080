"""Stage `query`: the answer to a question, written only from the retrieved context.

The context is rendered with ids (seeds/query.md, step 3): the subgraph inside `<graph>`,
the passages inside `<passages>` (left out when there are none), the geo entities near the
places of the question inside `<nearby>` (only for a nearby search with a place), then `<current_time>`,
`<as_of>` (only for a question asked as of a time) and the question. The model replies with only JSON: the answer and the ids it used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Protocol

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field

from gligabao.model import Nearby, Passage, StoredEdge, StoredEntity
from gligabao.timefmt import rfc3339


class Context(Protocol):
    """What the prompt renders of a retrieved context (memory.retrieval.Context is one)."""

    entities: Sequence[StoredEntity]
    edges: Sequence[StoredEdge]
    passages: Sequence[Passage]
    nearby: Nearby | None  # geo: the nearby search (its entities are among `entities` too)


QUERY_SYSTEM = """You answer questions from a long-term memory: a knowledge graph of entities and facts
(edges), and passages of longer texts. Use only the context given inside <graph> and <passages>:
no general knowledge, no guesses. If the context does not hold the answer, say so plainly.

Facts over time
- <current_time> is now.
- An edge with no invalid_at is still true. valid_at is when it began to hold.
- An edge with an invalid_at stopped being true at that time: it is no longer true. Use it only
  for questions about the past ("where did ... work before", "in 2023 ..."), never as the present.

Answer with only a JSON object, no prose around it:
{"answer": "Alice works at Acme.", "entities": [1, 2], "edges": [1], "passages": [14]}
- answer: the answer in plain natural language, in the language of the question.
- entities, edges, passages: the ids of the entities, edges and passages you used for the
  answer ([] when none), as numbers, exactly as they appear in the context."""

# Asked as of a time: the same prompt, with the time the answer is for.
QUERY_AS_OF_SYSTEM = (
    QUERY_SYSTEM
    + """

Answering as of a time
- <as_of> is the time the question is asked about: answer as things were then, not now.
- Every edge in <graph> held at <as_of>: it began at or before it (valid_at), and its invalid_at,
  if any, is after it. Facts that only began later, or had already ended, are not given.
- So an edge with an invalid_at is the answer for <as_of> even though it is no longer true now;
  say it in the past tense when <as_of> is before <current_time>."""
)


# With a nearby search: how to read <nearby>.
NEARBY_RULES = """

Places nearby
- <nearby> lists the entities within radius_km of the places of the question (the anchors), each
  with its great-circle distance to the nearest anchor. They are entities of the context: cite
  their ids like the others when you use them."""


SERIES_RULES = """

Timeseries
- <series> lists the timeseries anchored to entities or edges of the context: each with its
  unit, the entity or edge it is about, its statistics over all its points and its latest points.
  Use them for questions about values over time; they are not entities or edges: do not cite
  their ids."""


def _ids(value: Any) -> list[int]:
    """The ids of a reply list, tolerantly: null is [], "12" and "entity 12" are 12; others dropped."""
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    ids = []
    for item in value:
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            ids.append(item)
        elif isinstance(item, float) and item.is_integer():
            ids.append(int(item))
        elif isinstance(item, str):
            match = re.fullmatch(r"\s*(?:\[?\s*[A-Za-z_]+\s+)?(\d+)\s*\]?\s*", item)
            if match:
                ids.append(int(match.group(1)))
        elif isinstance(item, dict) and "id" in item:
            ids.extend(_ids([item["id"]]))
    return ids


def _answer_text(value: Any) -> Any:
    return "" if value is None else value


def _not_blank(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("the answer is empty")
    return value


IdList = Annotated[list[int], BeforeValidator(_ids)]


class QueryReply(BaseModel):
    """{"answer": "...", "entities": [1, 2], "edges": [1], "passages": [14]}"""

    answer: Annotated[str, BeforeValidator(_answer_text), AfterValidator(_not_blank)]
    entities: IdList = Field(default_factory=list)
    edges: IdList = Field(default_factory=list)
    passages: IdList = Field(default_factory=list)


# --- rendering ----------------------------------------------------------------------------


def entity_line(entity: StoredEntity) -> str:
    """`[entity 1] Alice (person): engineer` (no `: ...` without a description)."""
    line = f"[entity {entity.id}] {entity.name} ({entity.type})"
    return f"{line}: {entity.description}" if entity.description else line


def edge_line(edge: StoredEdge, source: str, target: str) -> str:
    """`[edge 1] Alice(1) --works_at--> Acme(2): Alice works at Acme. [valid_at=..., invalid_at=...]`"""
    line = f"[edge {edge.id}] {source}({edge.source_id}) --{edge.relation}--> {target}({edge.target_id})"
    if edge.description:
        line += f": {edge.description}"
    times = [
        f"{name}={rfc3339(moment)}"
        for name, moment in (("valid_at", edge.valid_at), ("invalid_at", edge.invalid_at))
        if moment
    ]
    return f"{line} [{', '.join(times)}]" if times else line


def passage_lines(passage: Passage) -> list[str]:
    """`[passage 14] chunk 3 of text 12`, then `summary: ...` and `text: ...` as given."""
    lines = [f"[passage {passage.artifact_id}] chunk {passage.index} of text {passage.parent_id}"]
    if passage.summary is not None:
        lines.append(f"summary: {passage.summary}")
    if passage.text is not None:
        lines.append(f"text: {passage.text}")
    return lines


def render_graph(context: Context) -> str:
    names = {entity.id: entity.name for entity in context.entities}
    lines = [entity_line(entity) for entity in context.entities]
    lines += [
        edge_line(edge, names.get(edge.source_id, "?"), names.get(edge.target_id, "?"))
        for edge in context.edges
    ]
    return "\n".join(["<graph>", *lines, "</graph>"])


def render_passages(context: Context) -> str:
    lines = [line for passage in context.passages for line in passage_lines(passage)]
    return "\n".join(["<passages>", *lines, "</passages>"])


def nearby_line(entity: StoredEntity, distance_km: float, anchor_id: int, anchor: str) -> str:
    """`[entity 7] Versailles (city): 17.1 km from Paris(3)`"""
    return (
        f"[entity {entity.id}] {entity.name} ({entity.type}): {distance_km:.1f} km from {anchor}({anchor_id})"
    )


def render_nearby(nearby: Nearby) -> str:
    anchors = ", ".join(f"{a.name}({a.id})" for a in nearby.anchors)
    lines = [
        nearby_line(found.entity, found.distance_km, found.anchor.id, found.anchor.name)
        for found in nearby.entities
    ] or [f"(no entity within {nearby.radius_km:g} km of {anchors})"]
    return "\n".join([f'<nearby radius_km="{nearby.radius_km:g}" anchors="{anchors}">', *lines, "</nearby>"])


def context_sections(context: Context) -> list[str]:
    """The context's sections before its series: the graph, the passages and what is nearby.
    The series take what of the token budget these leave."""
    sections = [render_graph(context)]
    if context.passages:
        sections.append(render_passages(context))
    nearby = getattr(context, "nearby", None)
    if nearby is not None:
        sections.append(render_nearby(nearby))
    return sections


def query_prompt(
    context: Context, question: str, current_time: datetime, as_of: datetime | None = None
) -> tuple[str, str]:
    """(system, content) of the query call; asked `as_of` a time, the context holds the facts
    valid then, and the prompt says so (`<as_of>` after `<current_time>`, and its rules)."""
    parts = context_sections(context)
    nearby = getattr(context, "nearby", None)
    series = getattr(context, "series_lines", None)
    if series:
        parts.append("\n".join(["<series>", *series, "</series>"]))
    parts.append(f"<current_time>{rfc3339(current_time)}</current_time>")
    if as_of is not None:
        parts.append(f"<as_of>{rfc3339(as_of)}</as_of>")
    parts.append(f"<question>\n{question}\n</question>")
    system = QUERY_SYSTEM if as_of is None else QUERY_AS_OF_SYSTEM
    system = system if nearby is None else system + NEARBY_RULES
    return (system + SERIES_RULES if series else system), "\n".join(parts)
