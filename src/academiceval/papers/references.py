"""Reference list: split the References section into entries and read authors, year, title and arXiv id.

Entries are split by their printed labels ("[12]", "12.") when the list is numbered, otherwise by the hanging
indent of author-year lists (the first line of an entry starts further left than its continuation lines),
falling back to PyMuPDF's block boundaries.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from academiceval.papers.layout import Line
from academiceval.papers.refstring import parse_reference_string
from academiceval.papers.structure import join_lines
from academiceval.store.paper_models import Reference

_BRACKET_LABEL = re.compile(r"^\[(\d{1,4}|[A-Za-z][A-Za-z+\-]*\d{2,4}[a-z]?)\]\s*")
_DOT_LABEL = re.compile(r"^(\d{1,4})\.\s+(?=\S)")
# bare numbers ("7 J. M. Murray, Phys. Rev. ...": APS/RSC/AIP two-column styles)
_BARE_LABEL = re.compile(r"^(\d{1,4})\s+(?=[A-Z\u00c0-\u024f])")
# AIP/APS superscript-style lists print the number glued to the first author: "1S. B. Pope, Turbulent Flows"
_GLUED_LABEL = re.compile(r"^(\d{1,3})(?=[A-Z\u00c0-\u024f])")
ALPHA_LABEL = re.compile(r"^[A-Za-z][A-Za-z+\-]*\d{2,4}[a-z]?$")
# a full stop that ends a sentence-like segment (not an initial such as "J." or "et al.")
_INITIALS = re.compile(r"^(?:[A-Z][a-z]?\.?\s*-?\s*)+$")


def split_entries(lines: list[Line]) -> list[tuple[str | None, str]]:
    """Reference lines → (label, raw text) per entry."""
    lines = [ln for ln in lines if ln.text.strip()]
    if not lines:
        return []
    bracket = sum(1 for ln in lines if _BRACKET_LABEL.match(ln.text))
    dotted = sum(1 for ln in lines if _DOT_LABEL.match(ln.text))
    starts_labelled = bool(_BRACKET_LABEL.match(lines[0].text))
    if (bracket >= 3 and bracket >= 0.15 * len(lines)) or (bracket >= 2 and starts_labelled):
        return _split_by_label(lines, _BRACKET_LABEL)
    if dotted >= 2 and dotted >= 0.15 * len(lines) and _labels_increase(lines) and _DOT_LABEL.match(lines[0].text):
        return _split_by_label(lines, _DOT_LABEL)
    bare = sum(1 for ln in lines if _BARE_LABEL.match(ln.text))
    if (
        bare >= 3
        and bare >= 0.15 * len(lines)
        and _BARE_LABEL.match(lines[0].text)
        and _labels_increase(lines, _BARE_LABEL)
    ):
        return _split_by_label(lines, _BARE_LABEL, sequential=True)
    glued = sum(1 for ln in lines if _GLUED_LABEL.match(ln.text))
    if (
        glued >= 3
        and glued >= 0.15 * len(lines)
        and _GLUED_LABEL.match(lines[0].text)
        and _labels_increase(lines, _GLUED_LABEL)
    ):
        return _split_by_label(lines, _GLUED_LABEL, sequential=True)
    return [(None, raw) for raw in _split_by_indent(lines)]


def _labels_increase(lines: list[Line], pat: re.Pattern[str] = _DOT_LABEL) -> bool:
    nums = [int(m.group(1)) for ln in lines if (m := pat.match(ln.text))]
    ups = sum(1 for a, b in itertools.pairwise(nums) if b == a + 1)
    return ups >= 0.6 * max(1, len(nums) - 1)


def _split_by_label(
    lines: list[Line], pat: re.Pattern[str], *, sequential: bool = False
) -> list[tuple[str | None, str]]:
    """Entries start at labelled lines. `sequential`: a bare number starts an entry only when it is the next
    label (a wrapped line beginning "12 pages" or a volume number is a continuation)."""
    out: list[tuple[str | None, list[str]]] = []
    for ln in lines:
        m = pat.match(ln.text)
        if m and sequential and out and out[-1][0] is not None and m.group(1) != str(int(out[-1][0]) + 1):
            m = None
        if m:
            out.append((m.group(1), [ln.text[m.end() :]]))
        elif out:
            out[-1][1].append(ln.text)
    return [(label, join_lines(parts)) for label, parts in out if join_lines(parts)]


def _split_by_indent(lines: list[Line]) -> list[str]:
    """Hanging indent: per column, the leftmost x is an entry start; indented lines continue it."""
    starts: list[bool] = []
    # the left edge of each column: the most common x0 among lines of that (page, column)
    edges: dict[tuple[int, bool], float] = {}
    groups: dict[tuple[int, bool], list[float]] = {}
    for ln in lines:
        groups.setdefault((ln.page, ln.col_left), []).append(ln.x0)
    for key, xs in groups.items():
        edges[key] = min(xs)
    indented = sum(1 for ln in lines if ln.x0 - edges[(ln.page, ln.col_left)] > 4)
    use_indent = indented >= 0.2 * len(lines)
    for k, ln in enumerate(lines):
        if use_indent:
            starts.append(ln.x0 - edges[(ln.page, ln.col_left)] <= 4)
        else:
            new_block = k == 0 or ln.block != lines[k - 1].block
            starts.append(new_block)
    entries: list[list[str]] = []
    for ln, is_start in zip(lines, starts, strict=True):
        if is_start or not entries:
            entries.append([ln.text])
        else:
            entries[-1].append(ln.text)
    out = [join_lines(e) for e in entries]
    if not use_indent:
        # blocks can hold several entries: split at "Surname, X. ... year." boundaries is too risky; keep
        out = [o for o in out if o]
    return [o for o in out if len(o) > 10]


def parse_reference(index: int, label: str | None, raw: str) -> Reference:
    """One printed entry → `Reference` (fields by `refstring.parse_reference_string`)."""
    return parse_reference_string(raw).to_reference(index, label)


def surname(name: str) -> str:
    parts = [p for p in re.split(r"\s+", name.strip()) if p and not p.endswith(".")]
    return (parts[-1] if parts else name).strip(",.").lower()


def reference_style(refs: list[Reference]) -> str:
    """numeric ("[12]"), alphabetic ("[BCD+20]", "[Knu84]") or author_year (no labels)."""
    labelled = Counter(bool(r.label and r.label.isdigit()) for r in refs)
    if labelled[True] >= max(1, 0.5 * len(refs)):
        return "numeric"
    alpha = sum(1 for r in refs if r.label and ALPHA_LABEL.match(r.label))
    return "alphabetic" if alpha >= max(1, 0.5 * len(refs)) else "author_year"
