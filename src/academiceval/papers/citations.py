"""In-text citations: find markers in section text and resolve them to reference entries.

Numeric markers ("[3]", "[3, 7-9]") and alphabetic ones ("[BCD+20]", "[Knu84; LM19]") resolve through the
printed labels. Author-year markers ("Smith et al.,
2020", "(Lee and Kim, 2019; Wu, 2021)", "Smith (2020)") resolve by first-author surname plus year. A marker
is `grouped` when it shares a bracket or parenthesis with other citations.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from academiceval.papers.references import surname
from academiceval.store.paper_models import Citation, Reference, Section

_ALPHA = r"[A-Za-z][A-Za-z+\-]*\d{2,4}[a-z]?"
_ALPHA_GROUP = re.compile(rf"\[\s*({_ALPHA}(?:\s*[,;]\s*{_ALPHA})*)\s*\]")
_NUM_GROUP = re.compile(r"\[(\s*\d{1,4}(?:\s*[,–\-]\s*\d{1,4})*\s*)\]")
_NAME = r"[A-Z][A-Za-z'’\-]+(?:\s(?:van|von|de|der|del|da|di|le|la)\s[A-Z][A-Za-z'’\-]+)?"
_AY_ITEM = re.compile(
    rf"(?P<name>(?:{_NAME}|van {_NAME}|de {_NAME}))(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_NAME})?,?\s+"
    r"(?P<year>(?:19|20)\d{2}[a-z]?)"
)
_MORE_YEARS = re.compile(r",\s*((?:19|20)\d{2}[a-z]?)\b")  # further years right after an item
_PAREN = re.compile(r"\(([^()]{4,400})\)")
_TEXTUAL = re.compile(
    rf"(?P<name>{_NAME})(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_NAME})?\s+\((?P<years>(?:19|20)\d{{2}}[a-z]?(?:[,;]\s*(?:19|20)\d{{2}}[a-z]?)*)\)"
)


def _fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c)).lower()


def find_citations(sections: list[Section], refs: list[Reference], style: str) -> list[Citation]:
    out: list[Citation] = []
    if not refs:
        return out
    if style == "alphabetic":
        by_label = {r.label: r.index for r in refs if r.label}
        for si, sec in enumerate(sections):
            if sec.role is not None and sec.role.value == "references":
                continue
            out.extend(_alphabetic(si, sec.text, by_label))
    elif style == "numeric":
        by_label = {r.label: r.index for r in refs if r.label}
        for si, sec in enumerate(sections):
            if sec.role is not None and sec.role.value == "references":
                continue
            out.extend(_numeric(si, sec.text, by_label, len(refs)))
    else:
        index = _author_year_index(refs)
        for si, sec in enumerate(sections):
            if sec.role is not None and sec.role.value == "references":
                continue
            out.extend(_author_year(si, sec.text, index))
    return out


def _expand(body: str) -> list[int]:
    nums: list[int] = []
    for part in re.split(r"\s*,\s*", body.strip()):
        m = re.fullmatch(r"(\d+)\s*[–\-]\s*(\d+)", part)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if 0 < b - a <= 50:
                nums.extend(range(a, b + 1))
        elif part.isdigit():
            nums.append(int(part))
    return nums


def _numeric(si: int, text: str, by_label: dict[str, int], n_refs: int) -> list[Citation]:
    found: list[Citation] = []
    for m in _NUM_GROUP.finditer(text):
        nums = _expand(m.group(1))
        if not nums or any(k < 1 or k > max(n_refs, 1) + 5 for k in nums):
            continue
        resolved = [by_label[str(k)] for k in nums if str(k) in by_label]
        found.append(
            Citation(
                section_index=si,
                start=m.start(),
                end=m.end(),
                text=m.group(0),
                style="numeric",
                reference_indices=resolved,
                grouped=len(nums) > 1,
            )
        )
    # adjacent brackets "[3][4]" or "[3], [4]" form one group
    for a, b in itertools.pairwise(found):
        if re.fullmatch(r"\s*,?\s*", text[a.end : b.start]):
            a.grouped = b.grouped = True
    return found


def _alphabetic(si: int, text: str, by_label: dict[str, int]) -> list[Citation]:
    """ "[BCD+20]", "[Knu84, LM19]": labels printed in the reference list, resolved by exact label."""
    found: list[Citation] = []
    for m in _ALPHA_GROUP.finditer(text):
        labels = [x.strip() for x in re.split(r"[,;]", m.group(1)) if x.strip()]
        resolved = [by_label[x] for x in labels if x in by_label]
        if not resolved:
            continue  # "[Fig12]"-like text that names no entry
        found.append(
            Citation(
                section_index=si,
                start=m.start(),
                end=m.end(),
                text=m.group(0),
                style="alphabetic",
                reference_indices=resolved,
                grouped=len(labels) > 1,
            )
        )
    return found


def _author_year_index(refs: list[Reference]) -> dict[tuple[str, str], list[int]]:
    index: dict[tuple[str, str], list[int]] = {}
    for r in refs:
        if r.year is None:
            continue
        m = re.search(rf"{r.year}[a-z]?", r.raw)
        year_key = m.group(0) if m else str(r.year)
        names = set()
        if r.authors:
            names.add(_fold(surname(r.authors[0])))
        first = re.match(r"\s*([A-Z][^\s,.]+(?:\s(?:van|von|de|der)\s\S+)?)", r.raw)
        if first:
            names.add(_fold(first.group(1).strip(",.")))
        for nm in names:
            index.setdefault((nm, year_key), []).append(r.index)
            index.setdefault((nm, year_key[:4]), []).append(r.index)
    return index


def _resolve(index: dict[tuple[str, str], list[int]], name: str, year: str) -> list[int]:
    key = _fold(name.split()[-1] if " " in name else name)
    hit = index.get((key, year)) or index.get((key, year[:4])) or []
    return sorted(set(hit))[:1]  # same surname and year: the first entry ("2017a" keys are exact)


def _author_year(si: int, text: str, index: dict[tuple[str, str], list[int]]) -> list[Citation]:
    found: list[Citation] = []
    taken: list[tuple[int, int]] = []
    for pm in _PAREN.finditer(text):
        inner = pm.group(1)
        items = list(_AY_ITEM.finditer(inner))
        if not items:
            continue
        # (name, year, start, end) per cited work; "Shannon, 1948, 1951" cites two works of one author
        works: list[tuple[str, str, int, int]] = []
        for m in items:
            works.append((m.group("name"), m.group("year"), m.start(), m.end()))
            pos = m.end()
            while (y := _MORE_YEARS.match(inner, pos)) is not None:
                works.append((m.group("name"), y.group(1), y.start(1), y.end(1)))
                pos = y.end()
        for name, year, a, b in works:
            start, end = pm.start(1) + a, pm.start(1) + b
            found.append(
                Citation(
                    section_index=si,
                    start=start,
                    end=end,
                    text=text[start:end],
                    style="author_year",
                    reference_indices=_resolve(index, name, year),
                    grouped=len(works) > 1,
                )
            )
            taken.append((start, end))
    for m in _TEXTUAL.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        years = re.split(r"[,;]\s*", m.group("years"))
        resolved: list[int] = []
        for y in years:
            resolved.extend(_resolve(index, m.group("name"), y))
        found.append(
            Citation(
                section_index=si,
                start=m.start(),
                end=m.end(),
                text=m.group(0),
                style="author_year",
                reference_indices=sorted(set(resolved)),
                grouped=len(years) > 1,
            )
        )
    found.sort(key=lambda c: c.start)
    return found
