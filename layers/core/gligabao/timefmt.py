"""Times as the API writes them: RFC 3339 in UTC with a Z (`2025-01-31T09:00:00Z`)."""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    moment = moment.astimezone(UTC)
    text = moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 time with an explicit offset; naive times are refused."""
    moment = datetime.fromisoformat(text.strip().replace("z", "Z"))
    if moment.tzinfo is None:
        raise ValueError("time must carry a time zone (e.g. 2025-01-31T09:00:00Z)")
    return moment.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)
