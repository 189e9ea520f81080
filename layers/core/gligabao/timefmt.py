"""Times as the API writes them: RFC 3339 in UTC with a Z (`2025-01-31T09:00:00Z`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime


def rfc3339(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    moment = moment.astimezone(UTC)
    text = moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


# An RFC 3339 time with an offset, nothing else ISO 8601 allows (week dates, ordinal dates, offsets in
# seconds, a date alone): matched whole, once trimmed, wherever a time comes in.
RFC3339_TIME = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
RFC3339 = re.compile(RFC3339_TIME)


def day_or_instant(moment: datetime | None) -> str | None:
    """The date (2025-05-01) when the time is midnight UTC, else the whole RFC 3339 time: how a
    series' times read in prose, as the gligabao server writes them."""
    text = rfc3339(moment)
    return text.removesuffix("T00:00:00Z") if text else text


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 time with an explicit offset, into UTC; anything else (a naive time, a
    date alone, another ISO 8601 form) is a ValueError, a time out of the years 1-9999 in UTC an
    OverflowError."""
    if not RFC3339.fullmatch(text.strip()):
        raise ValueError("time must be RFC 3339 with an offset (e.g. 2025-01-31T09:00:00Z)")
    # OverflowError for a time out of the years 1-9999 in UTC (0001-01-01T00:00:00+01:00 is in year 0)
    return datetime.fromisoformat(text.strip().replace("z", "Z").replace("t", "T")).astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)
