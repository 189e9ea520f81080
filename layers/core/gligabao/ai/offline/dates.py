"""The dates of plain sentences: "in 2019", "on 3 May 2021", "since March 2020", "last year",
"two years ago", read against the text's reference time."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}

_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH = rf"(?i:{_MONTH_NAMES})\.?"
_COUNT = rf"(?:\d{{1,3}}|{'|'.join(NUMBER_WORDS)})"
# One date, as a sentence writes it; the longest forms first, so "3 May 2021" is not read as "2021".
DATE = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? {_MONTH},? \d{{4}}"
    rf"|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}"
    rf"|{_MONTH} \d{{4}}"
    rf"|(?:19|20)\d{{2}}"
    rf"|last (?:year|month|week|spring|summer|autumn|fall|winter)|this (?:year|month)|yesterday|today"
    rf"|{_COUNT} (?:years?|months?|weeks?|days?) ago)"
)
_DATE_ONLY = re.compile(rf"^{DATE}$", re.IGNORECASE)


def parse_date(phrase: str, reference: datetime) -> datetime | None:
    """The instant a date phrase names (its first day at midnight UTC), or None when it names none."""
    text = phrase.strip().lower().replace(",", "")
    if not _DATE_ONLY.match(text):
        return None
    return _iso(text) or _absolute(text) or _relative(text, reference)


def _iso(text: str) -> datetime | None:
    found = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text)
    return _day(int(found[1]), int(found[2]), int(found[3])) if found else None


def _absolute(text: str) -> datetime | None:
    words = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text).replace(".", "").split()
    year = int(words[-1]) if words[-1].isdigit() and len(words[-1]) == 4 else None
    if year is None:
        return None
    month = next((MONTHS[w] for w in words if w in MONTHS), 1)
    day = next((int(w) for w in words[:-1] if w.isdigit()), 1)
    return _day(year, month, day)


def _relative(text: str, reference: datetime) -> datetime | None:
    start = reference.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if text == "today":
        return start
    if text == "yesterday":
        return start - timedelta(days=1)
    if text == "this year":
        return start.replace(month=1, day=1)
    if text == "this month":
        return start.replace(day=1)
    if text.startswith("last "):
        unit = text.removeprefix("last ")
        if unit == "year":
            return start.replace(year=start.year - 1, month=1, day=1)
        if unit == "month":
            return _months_before(start.replace(day=1), 1)
        if unit == "week":
            return start - timedelta(days=7)
        return start.replace(year=start.year - 1, month=1, day=1)  # a season: last year, roughly
    found = re.fullmatch(rf"({_COUNT}) (year|month|week|day)s? ago", text)
    if not found:
        return None
    count = int(found[1]) if found[1].isdigit() else NUMBER_WORDS[found[1]]
    unit = found[2]
    if unit == "year":
        return start.replace(year=start.year - count, month=1, day=1)
    if unit == "month":
        return _months_before(start.replace(day=1), count)
    return start - timedelta(days=count * (7 if unit == "week" else 1))


def _months_before(first_of_month: datetime, count: int) -> datetime:
    months = first_of_month.year * 12 + first_of_month.month - 1 - count
    return first_of_month.replace(year=months // 12, month=months % 12 + 1)


def _day(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "31 February 2020": no date
        return None
