"""When a candidate is the work a reference names: fuzzy title, first author and year together.

A title alone misleads on short or generic titles ("Attention", "Introduction to Algorithms" in two editions) and
a misprinted word costs a few points of similarity; the first author's surname and the year separate those cases.
`match` returns the score of a candidate, or None when it is not the work:

- title similarity (rapidfuzz ratio on normalised titles, 0–1) ≥ 0.95 — unless both author and year disagree;
- ≥ 0.90 when neither the author nor the year disagrees;
- ≥ 0.85 when both agree.

Author agreement: the reference's first surname is among the candidate's first three surnames. Year agreement:
within one year (preprint vs. proceedings). Unknown (a field missing on either side) is neither agreement nor
disagreement. The score is 0.8 × title + 0.1 × author + 0.1 × year (unknown counts 0.5), so links can be ranked
and reviewed.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz import fuzz

from academiceval.papers.bibliography import BibEntry, norm_title, surname

MIN_TITLE_CHARS = 12  # "BERT", "Adam": too short to match by text


def title_similarity(a: str, b: str) -> float:
    return fuzz.ratio(norm_title(a), norm_title(b)) / 100.0


def _agree(entry: BibEntry, authors: Sequence[str], year: int | None) -> tuple[bool | None, bool | None]:
    first = entry.first_author_surname
    a = None if not first or not authors else first in {surname(x) for x in authors[:3]}
    y = None if entry.year is None or year is None else abs(entry.year - year) <= 1
    return a, y


def match(entry: BibEntry, title: str, authors: Sequence[str], year: int | None) -> float | None:
    """The candidate's score, or None when it is not the work the entry names."""
    if not entry.title or len(norm_title(entry.title)) < MIN_TITLE_CHARS or not title:
        return None
    t = title_similarity(entry.title, title)
    a, y = _agree(entry, authors, year)
    ok = (t >= 0.95 and not (a is False and y is False)) or (t >= 0.90 and a is not False and y is not False)
    ok = ok or (t >= 0.85 and a is True and y is True)
    if not ok:
        return None
    val = {True: 1.0, None: 0.5, False: 0.0}
    return round(0.8 * t + 0.1 * val[a] + 0.1 * val[y], 4)
