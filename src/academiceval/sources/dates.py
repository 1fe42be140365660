"""Dates that carry their precision: a publication list often knows only "2024" or "March 2024".

Such a date is stored as the first day of its year/month plus a `DatePrecision`; every comparison that decides
leakage or windows asks whether the relation holds for *every* day the date could stand for. A 2024 paper is
therefore not "after 2024-06-01" (it may be from January), and a demo from the same year as its target is
"older" only if its date is known to be earlier.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from academiceval.store.paper_models import DatePrecision

PRECISIONS: tuple[DatePrecision, ...] = ("day", "month", "year")
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_name) if m
}
_ISO = re.compile(r"^\s*(\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2}))?)?")


def date_range(d: date, precision: DatePrecision = "day") -> tuple[date, date]:
    """First and last day the date can stand for."""
    if precision == "year":
        return date(d.year, 1, 1), date(d.year, 12, 31)
    if precision == "month":
        return date(d.year, d.month, 1), date(d.year, d.month, calendar.monthrange(d.year, d.month)[1])
    return d, d


def surely_after(d: date, precision: DatePrecision, cutoff: date) -> bool:
    """Every day the date can stand for lies strictly after `cutoff` (e.g. a model's knowledge cutoff)."""
    return date_range(d, precision)[0] > cutoff


def surely_before(a: date, pa: DatePrecision, b: date, pb: DatePrecision = "day") -> bool:
    """`a` is known to be earlier than `b`: a's last possible day precedes b's first possible day."""
    return date_range(a, pa)[1] < date_range(b, pb)[0]


def not_after(a: date, pa: DatePrecision, b: date, pb: DatePrecision = "day") -> bool:
    """`a` is known not to be later than `b` (same day allowed when both are exact days)."""
    return date_range(a, pa)[1] <= date_range(b, pb)[0]


def month_number(text: str | int | None) -> int | None:
    """BibTeX/CSL months: 3, "3", "mar", "March", "Mar." → 3; anything else → None."""
    if text is None:
        return None
    if isinstance(text, int):
        return text if 1 <= text <= 12 else None
    t = text.strip().strip("{}").rstrip(".").lower()
    if t.isdigit():
        n = int(t)
        return n if 1 <= n <= 12 else None
    return _MONTHS.get(t) or _MONTHS.get(t[:3])


def from_parts(year: int | str | None, month: int | str | None = None, day: int | str | None = None):
    """(date, precision) from year/month/day parts, or None without a usable year. Invalid months or days
    lower the precision instead of inventing a date."""
    try:
        y = int(str(year).strip().strip("{}")[:4]) if year is not None else None
    except ValueError:
        return None
    if y is None or not 1000 <= y <= 9999:
        return None
    m = month_number(month) if month not in (None, "") else None
    if m is None:
        return date(y, 1, 1), "year"
    try:
        dd = int(str(day).strip()) if day not in (None, "") else None
    except ValueError:
        dd = None
    if dd is not None and 1 <= dd <= calendar.monthrange(y, m)[1]:
        return date(y, m, dd), "day"
    return date(y, m, 1), "month"


def parse_iso_partial(text: str):
    """ "2024", "2024-03", "2024-03-15" (biblatex `date`) → (date, precision) or None."""
    m = _ISO.match(text or "")
    if not m:
        return None
    return from_parts(m.group(1), m.group(2), m.group(3))


def format_date(d: date, precision: DatePrecision) -> str:
    """ "2024", "2024-03" or "2024-03-15": the date as precisely as it is known."""
    if precision == "year":
        return f"{d.year:04d}"
    if precision == "month":
        return f"{d.year:04d}-{d.month:02d}"
    return d.isoformat()
