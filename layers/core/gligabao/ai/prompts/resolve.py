"""Stage `resolve`: new facts against the live facts they might repeat or contradict.

At most one call per remembered text, with all its new facts and up to 50 stored ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, Field

from gligabao.timefmt import rfc3339

RESOLVE_MAX_TOKENS = 4096


class FactDecision(BaseModel):
    fact: int = Field(description="the number of the new fact")
    duplicate_of: int | None = Field(default=None, description="id of the existing fact it repeats")
    contradicts: Annotated[list[int], BeforeValidator(lambda v: [] if v is None else v)] = Field(
        default_factory=list, description="ids of the existing facts it makes no longer true"
    )


class Resolution(BaseModel):
    facts: Annotated[list[FactDecision], BeforeValidator(lambda v: [] if v is None else v)] = Field(
        default_factory=list
    )


@dataclass(frozen=True)
class FactLine:
    """A fact as the prompt shows it."""

    key: int  # the new fact's number, or the stored edge's id
    source: str
    relation: str
    target: str
    description: str
    valid_at: datetime | None
    invalid_at: datetime | None


RESOLVE_SYSTEM = """You keep a knowledge graph consistent. You get facts already stored in it (each with
its id) and new facts just extracted from a text (each with its number). For each new fact decide:

- duplicate_of: the id of the stored fact that says the same thing (same entities, same meaning,
  maybe in other words), or null.
- contradicts: the ids of the stored facts that cannot still be true if the new fact is true (Alice
  lives in Lyon contradicts Alice lives in Paris; Alice works at Globex does not contradict Alice
  works at Acme unless the text implies she left Acme). A fact is never contradicted by its
  duplicate. [] when there are none.

Use only the ids listed in <stored_facts>. Answer with only a JSON object, no prose:
{"facts": [{"fact": 0, "duplicate_of": 12, "contradicts": []}, {"fact": 1, "duplicate_of": null, "contradicts": [7]}]}
New facts with neither a duplicate nor a contradiction may be left out."""


def resolve_prompt(
    new_facts: Sequence[FactLine],
    stored_facts: Sequence[FactLine],
    *,
    reference_time: datetime,
    current_time: datetime,
) -> tuple[str, str]:
    """(system, content) of the resolve call."""
    lines = [
        f"<reference_time>{rfc3339(reference_time)}</reference_time>",
        f"<current_time>{rfc3339(current_time)}</current_time>",
        "<stored_facts>",
        *(f"[id {fact.key}] {_fact_text(fact)}" for fact in stored_facts),
        "</stored_facts>",
        "<new_facts>",
        *(f"[{fact.key}] {_fact_text(fact)}" for fact in new_facts),
        "</new_facts>",
    ]
    return RESOLVE_SYSTEM, "\n".join(lines)


def _fact_text(fact: FactLine) -> str:
    text = f"{fact.source} {fact.relation} {fact.target}"
    if fact.description:
        text += f": {fact.description}"
    times = []
    if fact.valid_at is not None:
        times.append(f"valid from {rfc3339(fact.valid_at)}")
    if fact.invalid_at is not None:
        times.append(f"until {rfc3339(fact.invalid_at)}")
    return text + (f" ({', '.join(times)})" if times else "")


# --- a window of texts (bulk import): the new facts of several texts, in the order they were said


class WindowFactDecision(FactDecision):
    duplicate_of_new: int | None = Field(
        default=None, description="number of the earlier new fact it repeats"
    )
    contradicts_new: Annotated[list[int], BeforeValidator(lambda v: [] if v is None else v)] = Field(
        default_factory=list, description="numbers of the earlier new facts it makes no longer true"
    )


class WindowResolution(BaseModel):
    facts: Annotated[list[WindowFactDecision], BeforeValidator(lambda v: [] if v is None else v)] = Field(
        default_factory=list
    )


@dataclass(frozen=True)
class SaidFact:
    """A new fact of a window, with when its text was said."""

    fact: FactLine
    said_at: datetime


WINDOW_RESOLVE_SYSTEM = """You keep a knowledge graph consistent. You get facts already stored in it (each with
its id) and new facts just extracted from several texts (each with its number), in the order the
texts were said: a new fact with a higher number was said at the same time or later. For each new
fact decide:

- duplicate_of: the id of the stored fact that says the same thing (same entities, same meaning,
  maybe in other words), or null; duplicate_of_new: the number of an EARLIER new fact that says the
  same thing, or null.
- contradicts: the ids of the stored facts that cannot still be true if the new fact is true (Alice
  lives in Lyon contradicts Alice lives in Paris; Alice works at Globex does not contradict Alice
  works at Acme unless the text implies she left Acme); contradicts_new: the numbers of the EARLIER
  new facts it makes no longer true in the same way. A fact is never contradicted by its duplicate.
  [] when there are none.

Judge each new fact as if the earlier new facts were stored already; never point to a later new
fact. Use only the ids listed in <stored_facts> and the numbers in <new_facts>. Answer with only a
JSON object, no prose:
{"facts": [{"fact": 0, "duplicate_of": 12, "contradicts": [], "duplicate_of_new": null, "contradicts_new": []},
 {"fact": 1, "duplicate_of": null, "contradicts": [7], "duplicate_of_new": null, "contradicts_new": [0]}]}
New facts with neither a duplicate nor a contradiction may be left out."""


def window_resolve_prompt(
    new_facts: Sequence[SaidFact], stored_facts: Sequence[FactLine], *, current_time: datetime
) -> tuple[str, str]:
    """(system, content) of a window's resolve call: its new facts in the order said."""
    lines = [
        f"<current_time>{rfc3339(current_time)}</current_time>",
        "<stored_facts>",
        *(f"[id {fact.key}] {_fact_text(fact)}" for fact in stored_facts),
        "</stored_facts>",
        "<new_facts>",
        *(f"[{said.fact.key}] {_fact_text(said.fact)} [said {rfc3339(said.said_at)}]" for said in new_facts),
        "</new_facts>",
    ]
    return WINDOW_RESOLVE_SYSTEM, "\n".join(lines)
