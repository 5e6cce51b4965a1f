"""Calendar dates named in a query ("9 November, 2022", "May 7, 2023", "2023-05-07")."""

from __future__ import annotations

import re
from datetime import date, datetime

_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = "(" + "|".join(_MONTHS) + "|sept|" + "|".join(m[:3] for m in _MONTHS) + r")\.?"
_DAY_FIRST = re.compile(rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+)?{_MONTH},?\s+(\d{{4}})\b")
_MONTH_FIRST = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")

# (year, month, day or None for a whole month)
QueryDate = tuple[int, int, int | None]


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name[:3]))


def query_dates(query: str) -> list[QueryDate]:
    """Return the dates (or whole months) a query names, in English or ISO form."""
    text = query.lower()
    found: list[QueryDate] = []
    for m in _MONTH_FIRST.finditer(text):
        found.append((int(m.group(3)), _month(m.group(1)), int(m.group(2))))
    for m in _DAY_FIRST.finditer(text):
        found.append((int(m.group(3)), _month(m.group(2)), int(m.group(1)) if m.group(1) else None))
    for m in _ISO.finditer(text):
        found.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return [d for d in found if 1 <= d[1] <= 12]


def as_date(stamp: datetime | float | None) -> date | None:
    """Return the calendar date of a packet timestamp (floats are POSIX seconds, local)."""
    if stamp is None:
        return None
    if isinstance(stamp, datetime):
        return stamp.date()
    try:
        return datetime.fromtimestamp(float(stamp)).date()
    except (OverflowError, OSError, ValueError):
        return None


def date_match(day: date | None, dates: list[QueryDate]) -> float:
    """1.0 if `day` is a named date, 0.5 if it falls in a named month, else 0.0."""
    if day is None:
        return 0.0
    best = 0.0
    for year, month, mday in dates:
        if day.year == year and day.month == month:
            if mday is None or day.day == mday:
                return 1.0
            best = 0.5
    return best


def timestamp_seconds(stamp: datetime | float | None) -> float | None:
    """A packet timestamp as POSIX seconds (`None` stays `None`)."""
    if isinstance(stamp, datetime):
        return stamp.timestamp()
    return float(stamp) if stamp is not None else None
