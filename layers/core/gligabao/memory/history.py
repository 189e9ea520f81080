"""The history of facts: when each fact held, whatever the order in which texts arrive (the overlap
rule of SPEC section 5; docs/concepts.md, "Time").

What a text says of a fact is kept as a *statement*: the period it gave (its start may be unknown,
its end open) and when the text was said (its reference time; a correction's, the time of the
correction). A fact's rows (gb_edges) are derived from its statements; the rule decides how far
each statement holds:

- Where two contradicting facts' periods overlap, the one said later holds: the other ends where
  the later-said one begins, and when nothing of it remains it is kept with an empty period
  (`invalid_at` = `valid_at`), superseded. A statement said earlier than one it contradicts is
  therefore stored already cut.
- A later-said statement of the same fact that gives an end closes the earlier ones it overlaps
  there (ended, not superseded); statements of one fact otherwise add up.
- A correction (its time is when it was made) ends the statements said before it of the fact it
  corrected, where the corrected period began.
- A statement whose start is unknown ("Alice left Acme in 2024") says when a period ended: it
  closes the fact's period before that end, holds at no instant of its own, and ends no other fact.
- Of two statements said at the same instant, the one stored later counts as said later.

Every cut only moves an end earlier and each pair of statements is compared once, when the later
of the two arrives, so the result does not depend on the order of arrival. A fact's rows are the
connected pieces of the periods its statements hold (overlapping or touching ones are one row); a
row is superseded when its end is a contradicting fact's start. Forgetting a fact removes its
statements without giving back what they cut (forget never revives); restoring a fact is a
statement of it said at the time of the restore.

This module is pure: no database, no model. `settle` turns what was read of the affected facts
and the new statements into the changes to write (memory/fact_plan.py builds its input and
db/fact_history.py writes its output).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

NEVER = datetime.min.replace(tzinfo=UTC)  # the start of a statement whose start is unknown
FOREVER = datetime.max.replace(tzinfo=UTC)  # the end of a statement whose end is open

SAID = "said"  # a text (or a caller's facts, an image, a correction's new value, a restore) stated it
CORRECTION = "correction"  # a correction replaced the fact over a period: holds nothing itself

FactKey = Hashable  # (source, target, relation): each end an entity id, or a new entity's name


@dataclass(frozen=True)
class NewRow:
    """A row the plan creates (its id is allocated when the plan is applied)."""

    number: int


RowKey = int | NewRow


@dataclass(frozen=True)
class NewStatement:
    number: int


StatementKey = int | NewStatement


@dataclass
class Statement:
    """What one text said of one fact, and how far it holds now."""

    key: StatementKey
    fact: FactKey
    row: RowKey  # the row it belongs to
    valid_at: datetime | None  # the start it gave; None: unknown
    invalid_at: datetime | None  # the end it gave; None: open
    said_at: datetime
    seq: int  # the order of storing, among statements said at the same instant
    kind: str = SAID
    ends_at: datetime = FOREVER  # how far it holds: FOREVER open, NEVER not at all (start unknown)
    cut_by: RowKey | None = None  # the contradicting fact's row where that is what ended it
    artifact_id: int | None = None

    def __post_init__(self) -> None:
        if self.ends_at is FOREVER and self.invalid_at is not None:  # a new statement: as stated
            self.ends_at = self.invalid_at

    @property
    def start(self) -> datetime:
        return self.valid_at if self.valid_at is not None else NEVER

    @property
    def stated_end(self) -> datetime:
        return self.invalid_at if self.invalid_at is not None else FOREVER

    @property
    def holds(self) -> bool:
        """Whether it holds at some instant: a known start, before its end."""
        return self.kind == SAID and self.valid_at is not None and self.ends_at > self.valid_at

    @property
    def unknown_start(self) -> bool:
        return self.kind == SAID and self.valid_at is None

    def later_than(self, other: Statement) -> bool:
        return (self.said_at, self.seq) > (other.said_at, other.seq)

    def overlaps(self, other: Statement) -> bool:
        """Whether the periods they gave overlap (an unknown start counts as the beginning of time)."""
        return self.start < other.stated_end and other.start < self.stated_end


@dataclass(frozen=True)
class Conflict:
    """A judgement about two facts: they contradict (the resolve stage) or not (a restore that keeps
    both). The latest said of the judgements about a pair of facts is the one that counts."""

    facts: frozenset
    contradicts: bool
    said_at: datetime
    seq: int
    rows: tuple[RowKey, RowKey]  # the rows it was judged about (kept with them)


@dataclass
class Row:
    """A fact's row (an edge) as stored: its period and whether, and by what, it was superseded."""

    key: RowKey
    fact: FactKey
    valid_at: datetime | None
    invalid_at: datetime | None
    expired_at: datetime | None = None
    superseded_by: RowKey | None = None
    like: RowKey | None = None  # a new row split off another: its sentence, vector and provenance

    @property
    def superseded(self) -> bool:
        return self.expired_at is not None


@dataclass
class History:
    """What is stored of the facts a change touches: their rows, statements and judgements."""

    rows: dict[RowKey, Row] = field(default_factory=dict)
    statements: dict[StatementKey, Statement] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)

    def copy(self) -> History:
        return History(
            {k: replace(r) for k, r in self.rows.items()},
            {k: replace(s) for k, s in self.statements.items()},
            list(self.conflicts),
        )

    def of_fact(self, fact: FactKey) -> list[Statement]:
        return [s for s in self.statements.values() if s.fact == fact]


@dataclass
class Settled:
    """The history after a change, and what changed: the rows and statements to write."""

    history: History
    rows_changed: list[RowKey]  # new or changed rows
    statements_changed: list[StatementKey]  # new or changed statements
    newly_superseded: list[RowKey]  # rows that were not superseded and now are


def contradicting(conflicts: Iterable[Conflict]) -> dict[frozenset, bool]:
    """Whether each pair of facts contradicts: the latest said judgement about it."""
    latest: dict[frozenset, Conflict] = {}
    for conflict in conflicts:
        kept = latest.get(conflict.facts)
        if kept is None or (conflict.said_at, conflict.seq) >= (kept.said_at, kept.seq):
            latest[conflict.facts] = conflict
    return {facts: conflict.contradicts for facts, conflict in latest.items()}


def settle(
    history: History,
    new: Sequence[Statement],
    conflicts: Sequence[Conflict],
    now: datetime,
    *,
    rederive: Iterable[FactKey] = (),
) -> Settled:
    """Add the new statements (with the judgements made about them) to the history: compare each
    with every stored statement of its fact and of the facts it contradicts, cut what the rule
    cuts, and derive the rows of every fact that changed, and of the facts in `rederive` (whose
    statements a forget removed). `history` is left as it was.

    The new statements are one change's (one text, one correction, one restore): said at the same
    instant and stored together, they are not compared with each other."""
    settled = history.copy()
    settled.conflicts.extend(conflicts)
    relation = contradicting(settled.conflicts)
    before = {key: (s.ends_at, s.cut_by, s.row) for key, s in settled.statements.items()}
    rows_before = {key: replace(row) for key, row in settled.rows.items()}
    placeholders = {s.key: s.row for s in new}
    touched: dict[FactKey, None] = dict.fromkeys(rederive)
    stored = list(settled.statements.values())
    for statement in new:
        statement = replace(statement)
        for other in stored:
            if _compare(statement, other, relation):
                touched[other.fact] = None
        settled.statements[statement.key] = statement
        touched[statement.fact] = None
    rows = _RowNumbers(settled)
    moved: dict[RowKey, RowKey] = {}
    for fact in touched:
        _derive_rows(settled, fact, now, rows, moved)
    _follow_placeholders(settled, placeholders)
    rows_changed = [key for key, row in settled.rows.items() if row != rows_before.get(key)]
    statements_changed = [
        key for key, s in settled.statements.items() if before.get(key) != (s.ends_at, s.cut_by, s.row)
    ]
    newly_superseded = [
        key
        for key in rows_changed
        if settled.rows[key].superseded and not (key in rows_before and rows_before[key].superseded)
    ]
    return Settled(settled, rows_changed, statements_changed, newly_superseded)


def _ordered(a: Statement, b: Statement) -> tuple[Statement, Statement] | None:
    """(the later said, the earlier), or None for two statements of one change."""
    if a.later_than(b):
        return a, b
    if b.later_than(a):
        return b, a
    return None


def _compare(new: Statement, stored: Statement, relation: dict[frozenset, bool]) -> bool:
    """Apply the rule between a new statement and a stored one; whether the stored one changed."""
    ordered = _ordered(new, stored)
    if ordered is None:
        return False
    later, earlier = ordered
    if new.fact == stored.fact:
        if later.kind == CORRECTION:
            changed = (
                earlier.kind == SAID and later.overlaps(earlier) and _cut(earlier, later.start, later.cut_by)
            )
        elif earlier.kind == CORRECTION:
            changed = False  # a correction said earlier than a statement does not end it
        else:
            changed = (
                later.invalid_at is not None
                and later.overlaps(earlier)
                and _cut(earlier, later.invalid_at, None)
            )
        return changed and earlier is stored
    if new.kind != SAID or stored.kind != SAID or not relation.get(frozenset((new.fact, stored.fact))):
        return False
    if later.valid_at is None or earlier.valid_at is None or not later.overlaps(earlier):
        return False  # an unknown start says when a period ended, not when the other one began
    return _cut(earlier, later.valid_at, later.row) and earlier is stored


def _cut(statement: Statement, at: datetime, by: RowKey | None) -> bool:
    """End the statement at `at` if that is earlier (never before its start); `by`: the
    contradicting fact's row, or None for an end its own fact gave. Whether it changed."""
    end = max(statement.start, at)
    if end < statement.ends_at:
        statement.ends_at, statement.cut_by = end, by
        return True
    if end == statement.ends_at and by is None and statement.cut_by is not None:
        statement.cut_by = None  # ended by its own fact as much as by the other: ended, not superseded
        return True
    return False


@dataclass
class Piece:
    """A connected stretch of time a fact holds, and the statements that hold there."""

    start: datetime
    end: datetime
    statements: list[Statement]


def pieces(statements: Iterable[Statement]) -> list[Piece]:
    """The connected stretches the statements hold (overlapping or touching ones joined), in order."""
    found: list[Piece] = []
    for statement in sorted((s for s in statements if s.holds), key=lambda s: (s.start, s.ends_at)):
        if found and statement.start <= found[-1].end:
            found[-1].end = max(found[-1].end, statement.ends_at)
            found[-1].statements.append(statement)
        else:
            found.append(Piece(statement.start, statement.ends_at, [statement]))
    return found


class _RowNumbers:
    """Numbers for the rows a change creates, after those its new statements brought."""

    def __init__(self, history: History) -> None:
        keys = [*history.rows, *(s.row for s in history.statements.values())]
        self._next = 1 + max((k.number for k in keys if isinstance(k, NewRow)), default=0)

    def new(self) -> NewRow:
        key, self._next = NewRow(self._next), self._next + 1
        return key


UNKNOWN_START = "unknown start"


def _derive_rows(
    history: History, fact: FactKey, now: datetime, numbers: _RowNumbers, moved: dict[RowKey, RowKey]
) -> None:
    """The fact's rows from its statements: one row per piece (the oldest of the rows its
    statements belonged to, else a new one), one for the statements of unknown start that close
    no piece; every other row that had a statement of the fact holds nowhere (emptied)."""
    statements = history.of_fact(fact)
    had = {s.row for s in statements}
    taken: dict[RowKey, Piece | str] = {}

    def home(statement: Statement, row: RowKey) -> None:
        if statement.row != row:
            moved[statement.row] = row
            statement.row = row

    for piece in pieces(statements):
        row = _row_for(history, fact, [s.row for s in piece.statements], taken, numbers)
        taken[row] = piece
        for statement in piece.statements:
            home(statement, row)
    unclosed = []
    for statement in (s for s in statements if s.unknown_start and s.ends_at > NEVER):
        row = _closing(taken, statement.ends_at)
        if row is None:
            unclosed.append(statement)
        else:
            home(statement, row)
    if unclosed:
        row = _row_for(history, fact, [s.row for s in unclosed], taken, numbers)
        taken[row] = UNKNOWN_START
        for statement in unclosed:
            home(statement, row)
    for statement in statements:  # a new statement that holds nowhere, inside a piece: with it
        if statement.kind == SAID and not statement.holds and isinstance(statement.row, NewRow):
            inside = _inside(taken, statement.start)
            if inside is not None and statement.row not in taken:
                home(statement, inside)
    for statement in statements:
        if statement.row not in history.rows:  # a new statement stored already emptied
            history.rows[statement.row] = Row(statement.row, fact, statement.valid_at, statement.invalid_at)
    for key in sorted({*(k for k in had if k in history.rows), *(s.row for s in statements)}, key=_row_order):
        row = history.rows[key]
        mine = [s for s in statements if s.row == key]
        _settle_row(row, taken.get(key), mine, moved.get(key), now)


def _row_order(key: RowKey) -> tuple[int, int]:
    return (0, key) if isinstance(key, int) else (1, key.number)


def _row_for(
    history: History, fact: FactKey, homes: Sequence[RowKey], taken: dict, numbers: _RowNumbers
) -> RowKey:
    """The row a piece (or the group of unknown starts) is stored as: the oldest stored row one of
    its statements belonged to that no earlier piece took, else the new row of one of its new
    statements, else a new row split off the row its first statement belonged to."""
    stored = sorted(k for k in set(homes) if isinstance(k, int) and k not in taken)
    if stored:
        return stored[0]
    new = [k for k in homes if isinstance(k, NewRow) and k not in taken]
    if new:
        if new[0] not in history.rows:
            history.rows[new[0]] = Row(new[0], fact, None, None)
        return new[0]
    key = numbers.new()
    history.rows[key] = Row(key, fact, None, None, like=homes[0])
    return key


def _closing(taken: dict, end: datetime) -> RowKey | None:
    """The row of the latest piece that began before `end`: the period a statement of unknown
    start closes."""
    before = [(p.start, key) for key, p in taken.items() if isinstance(p, Piece) and p.start < end]
    return max(before, key=lambda item: item[0])[1] if before else None


def _inside(taken: dict, instant: datetime) -> RowKey | None:
    return next(
        (key for key, p in taken.items() if isinstance(p, Piece) and p.start <= instant <= p.end), None
    )


def _settle_row(
    row: Row, piece: Piece | str | None, mine: Sequence[Statement], moved_to: RowKey | None, now: datetime
) -> None:
    if isinstance(piece, Piece):
        row.valid_at = piece.start
        row.invalid_at = None if piece.end == FOREVER else piece.end
        binding = sorted(
            (s for s in piece.statements if s.ends_at == piece.end), key=lambda s: (s.said_at, s.seq)
        )
        cutter = None if any(s.cut_by is None for s in binding) else binding[-1].cut_by
        _set_superseded(row, cutter, now)
        return
    if piece == UNKNOWN_START:
        row.valid_at = None
        end = max(s.ends_at for s in mine if s.unknown_start)
        row.invalid_at = None if end == FOREVER else end
        _set_superseded(row, None, now)
        return
    # Holds nowhere: emptied, and superseded by what cut its last statement (or took them over).
    starts = [s.valid_at for s in mine if s.valid_at is not None]
    if starts:
        row.valid_at = min(starts)
    if row.valid_at is not None:
        row.invalid_at = row.valid_at
    elif row.invalid_at is None:  # neither start nor end known (before migration 0042): ends now
        row.invalid_at = now
    cutters = [s.cut_by for s in sorted(mine, key=lambda s: s.ends_at) if s.cut_by is not None]
    cutter = cutters[-1] if cutters else moved_to if moved_to is not None else row.superseded_by
    if row.expired_at is None:
        row.expired_at = now
    row.superseded_by = cutter


def _set_superseded(row: Row, cutter: RowKey | None, now: datetime) -> None:
    if cutter is None:
        row.expired_at, row.superseded_by = None, None
    else:
        if row.expired_at is None:
            row.expired_at = now
        row.superseded_by = cutter


def _follow_placeholders(history: History, placeholders: dict[StatementKey, RowKey]) -> None:
    """A new statement's row placeholder that no row became (it joined a stored row): the
    references to it (what it cut, the judgements about it) point to the row it joined."""
    final = {}
    for key, placeholder in placeholders.items():
        row = history.statements[key].row
        if placeholder != row and placeholder not in history.rows:
            final[placeholder] = row
    if not final:
        return
    for statement in history.statements.values():
        if statement.cut_by in final:
            statement.cut_by = final[statement.cut_by]
    for row in history.rows.values():
        if row.superseded_by in final:
            row.superseded_by = final[row.superseded_by]
    history.conflicts = [
        replace(c, rows=tuple(final.get(key, key) for key in c.rows))  # type: ignore[arg-type]
        for c in history.conflicts
    ]
