"""Stage `resolve_series`: which of the deployment's timeseries providers has data for which of a
text's key entities, and how each provider names the entity (a ticker, a station code), for
remember's `timeseries.fetch` (memory/derived.py). One call per fetch, only when a provider is
registered; the model answers with only JSON."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field

from gligabao.timefmt import rfc3339

RESOLVE_SERIES_MAX_TOKENS = 2048

SYSTEM = """You match the entities of a text with the timeseries providers that hold data about them.

<providers> lists each provider: its name, what it holds and for which entities, and the form
of the identifier it needs (query_format). <entities> lists the entities as "[n] name | type |
description". <reference_time> is when the text was written.

Answer with only a JSON object, no prose, in this shape:
{"assignments": [{"entity": 0, "provider": "prices", "query": "AAPL", "reason": "Apple is a listed company"}]}

- Assign a provider to an entity only when its description plainly covers that entity, as it was
  at <reference_time>. When in doubt (an unclear provider, an ambiguous name), leave it out: most
  entities have no provider, and an empty list is a good answer.
- query: the identifier the provider needs, in its query_format (the entity's full name when it
  has none). Never make one up: leave the entity out instead.
- entity: the number n of <entities>; provider: a name of <providers>; one assignment per pair.
- reason: one short sentence."""


def _list(value: Any) -> list:
    """The assignments that are objects; a reply without a list has none."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


class Assignment(BaseModel):
    entity: int
    provider: str
    query: str = Field(min_length=1, max_length=256)
    reason: str = ""


class SeriesAssignments(BaseModel):
    assignments: Annotated[list[Assignment], BeforeValidator(_list)] = Field(default_factory=list)


def resolve_series_content(
    providers: Sequence[tuple[str, str, str]],
    entities: Sequence[tuple[str, str, str]],
    reference_time: datetime,
) -> str:
    """The user content: `providers` as (name, description, query_format), `entities` as (name,
    type, description), numbered from 0."""
    lines = ["<providers>"]
    for name, description, query_format in providers:
        lines += [
            f"- name: {name}",
            f"  description: {description}",
            f"  query_format: {query_format or '(none)'}",
        ]
    lines += ["</providers>", "<entities>"]
    lines += [
        f"[{n}] {name} | {kind} | {description or '(none)'}"
        for n, (name, kind, description) in enumerate(entities)
    ]
    lines += ["</entities>", f"<reference_time>{rfc3339(reference_time)}</reference_time>"]
    return "\n".join(lines)
