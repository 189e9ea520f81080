"""A reference model of the history rule (docs/concepts.md, "Time"), written apart from the product's
engine (memory/history.py) and as plainly as the rule reads, for the property tests to hold the
product against.

It knows nothing of rows, arrival order or stored judgements: given every statement ever made (what
each text said of a fact, and when) and which facts contradict, it says how far each statement holds
and so what holds at each instant:

- a statement holds from the start it gave to the end it gave, unless a statement said later
  overlaps it and either contradicts its fact (then it ends where that one begins), or is of the same
  fact and gives an end (then it ends there), or is a correction of its fact (then it ends where the
  corrected period began); never before its own start;
- a statement of unknown start holds at no instant;
- a fact holds where one of its statements holds; a stretch of it is superseded when what ended it
  was a contradiction (or a correction), and not also its own fact's end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

NEVER = datetime.min.replace(tzinfo=UTC)
FOREVER = datetime.max.replace(tzinfo=UTC)

Fact = tuple  # (source, relation, target)


@dataclass(frozen=True)
class Said:
    fact: Fact
    valid_at: datetime | None
    invalid_at: datetime | None
    said_at: datetime
    seq: int = 0  # the order of storing, among statements said at the same instant
    correction: bool = False  # a correction of `fact` over [valid_at, invalid_at)
    keeps: frozenset = field(default_factory=frozenset)  # facts it was said not to contradict (a restore)

    def later_than(self, other: Said) -> bool:
        return (self.said_at, self.seq) > (other.said_at, other.seq)

    def overlaps(self, other: Said) -> bool:
        return (self.valid_at or NEVER) < (other.invalid_at or FOREVER) and (other.valid_at or NEVER) < (
            self.invalid_at or FOREVER
        )


Stretch = tuple[datetime, datetime | None, bool]  # (start, end or None, superseded)


def timeline(
    statements: Iterable[Said], contradicts: Callable[[Fact, Fact], bool]
) -> dict[Fact, list[Stretch]]:
    """Where each fact holds: its stretches, in order."""
    statements = list(statements)
    held: dict[Fact, list[tuple[datetime, datetime, bool]]] = {}
    for s in statements:
        if s.correction or s.valid_at is None:
            continue
        end, ended_by_contradiction = s.invalid_at or FOREVER, False
        for j in statements:
            if j is s or not j.later_than(s) or not j.overlaps(s):
                continue
            if j.fact == s.fact and j.correction:
                cut, by_contradiction = max(s.valid_at, j.valid_at or NEVER), True
            elif j.fact == s.fact and j.invalid_at is not None:
                cut, by_contradiction = j.invalid_at, False
            elif (
                j.fact != s.fact
                and not j.correction
                and j.valid_at is not None
                and s.fact not in j.keeps
                and contradicts(j.fact, s.fact)
            ):
                cut, by_contradiction = j.valid_at, True
            else:
                continue
            if cut < end or (cut == end and ended_by_contradiction and not by_contradiction):
                end, ended_by_contradiction = cut, by_contradiction
        end = max(end, s.valid_at)
        if end > s.valid_at:
            held.setdefault(s.fact, []).append((s.valid_at, end, ended_by_contradiction))
    return {fact: _stretches(pieces) for fact, pieces in held.items()}


def _stretches(pieces: list[tuple[datetime, datetime, bool]]) -> list[Stretch]:
    merged: list[list] = []
    for start, end, cut in sorted(pieces, key=lambda p: (p[0], p[1])):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1][1:] = [end, {cut}]
            elif end == merged[-1][1]:
                merged[-1][2].add(cut)
        else:
            merged.append([start, end, {cut}])
    return [(start, None if end == FOREVER else end, False not in cuts) for start, end, cuts in merged]


def holding_at(stretches: dict[Fact, list[Stretch]], instant: datetime) -> set[Fact]:
    return {
        fact
        for fact, pieces in stretches.items()
        if any(start <= instant < (end or FOREVER) for start, end, _ in pieces)
    }
