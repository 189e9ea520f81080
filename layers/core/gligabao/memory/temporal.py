"""The bi-temporal rules of remember (SPEC section 5).

Two time axes per edge: `valid_at`/`invalid_at` say when the fact held in the world (what
the text says, `valid_at` defaulting to the text's reference time); `created_at`/`expired_at`
say when the graph learned it and when a contradicting fact superseded it. How the periods of
facts that contradict are decided is memory/history.py's rule.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_fact_time(value: str | None) -> datetime | None:
    """A time the model gave for a fact, in UTC; None when absent or unreadable.

    Models write ISO 8601 in several ways (a date alone, no offset, a Z): a date is its
    midnight UTC and a time without offset is taken as UTC. An unreadable time is dropped
    rather than failing the whole text: the fact stays, without that bound.
    """
    if value is None:
        return None
    text = value.strip()
    if not text or text.lower() in ("null", "none", "unknown"):
        return None
    try:
        if _DATE_ONLY.match(text):
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is in year 0 in UTC, which no datetime holds
        return None


def fact_period(
    valid_at: datetime | None, invalid_at: datetime | None, reference_time: datetime
) -> tuple[datetime | None, datetime | None]:
    """(valid_at, invalid_at) of a new fact from what the text says about it.

    valid_at defaults to the reference time, except for a fact the text says had already
    ended by then with no start given: its start is unknown (null), not after its end. An
    end before an explicit start is a misreading and is dropped.
    """
    if valid_at is not None:
        return valid_at, (invalid_at if invalid_at is None or invalid_at >= valid_at else None)
    if invalid_at is not None and invalid_at <= reference_time:
        return None, invalid_at
    return reference_time, invalid_at
