"""The arXiv stamp on page 1 of a PDF: `arXiv:2203.00130v1 [cs.HC] 28 Feb 2022`, printed rotated in the left
margin of every PDF arXiv generates. It names the paper (id and version), its primary category and the date of
*that version*, so a PDF with no other metadata can still be placed on the timeline.

Only page 1 is read (one `get_text("dict")` call, a few milliseconds). Rotated lines are tried first because the
stamp lives there and body text can cite other arXiv ids; the horizontal page text is the fallback (some PDFs
flatten the stamp), always requiring the date right after the id/category, which body citations never have.
Text written one character per line, glyph by glyph with stray spaces, or extracted in reverse order, is
handled too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pymupdf

from academiceval.sources.errors import NotAPdfError
from academiceval.sources.pdf import looks_like_pdf

_ID = r"(?P<id>\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<v>\d+))?"
_CAT = r"(?:\[\s*(?P<cat>[a-z][a-z\-]*(?:\.[A-Za-z\-]+)?)\s*\])?"
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for m in names
}
_DATE = (
    r"(?:(?P<d1>\d{1,2})\s*(?P<m1>[A-Za-z]{3,9})\.?,?\s*(?P<y1>\d{4})"  # 28 Feb 2022 / 28Feb2022
    r"|(?P<m2>[A-Za-z]{3,9})\.?\s*(?P<d2>\d{1,2}),?\s*(?P<y2>\d{4})"  # Feb 28, 2022
    r"|(?P<y3>\d{4})-(?P<m3>\d{2})-(?P<d3>\d{2}))"  # 2022-02-28
)
STAMP_RE = re.compile(rf"arXiv\s*:\s*{_ID}\s*{_CAT}\s*{_DATE}", re.IGNORECASE)


@dataclass(frozen=True)
class ArxivStamp:
    """What the page-1 stamp says. `date` is the submission date of `version`, not necessarily of v1."""

    arxiv_id: str  # versionless, e.g. "2203.00130" or "hep-th/9901001"
    version: int | None
    primary_category: str | None
    date: date
    raw: str  # the matched stamp text, for error messages and checks


def _to_date(m: re.Match[str]) -> date | None:
    g = m.groupdict()
    try:
        if g["y3"]:
            return date(int(g["y3"]), int(g["m3"]), int(g["d3"]))
        day, mon, year = (g["d1"], g["m1"], g["y1"]) if g["y1"] else (g["d2"], g["m2"], g["y2"])
        month = _MONTHS.get(mon.lower())
        return date(int(year), month, int(day)) if month else None
    except ValueError:  # 31 Feb and the like: not a date
        return None


def parse_stamp(text: str) -> ArxivStamp | None:
    """The first well-formed stamp in a piece of text (also tried reversed), else None."""
    flat = " ".join(text.split())
    for candidate in (flat, flat[::-1]) if "vixra" in flat.lower() else (flat,):
        for m in STAMP_RE.finditer(candidate):
            when = _to_date(m)
            if when is None:
                continue
            aid = m.group("id")
            cat = m.group("cat") or (aid.split("/")[0] if "/" in aid else None)
            v = m.group("v")
            return ArxivStamp(aid, int(v) if v else None, cat, when, m.group(0))
    return None


def _page_texts(page: pymupdf.Page) -> list[str]:
    """Rotated lines first (one by one, then per block joined without separators for one-char-per-line text),
    then the whole page's text."""
    rotated: list[str] = []
    joined: list[str] = []
    for block in page.get_text("dict").get("blocks", []):
        parts = []
        for line in block.get("lines", []):
            dx, dy = line.get("dir", (1.0, 0.0))
            if abs(dy) > 0.5 or dx < 0:  # vertical or upside down
                text = "".join(s.get("text", "") for s in line.get("spans", []))
                rotated.append(text)
                parts.append(text)
        if len(parts) > 1:
            joined.append("".join(parts))
    return [*rotated, *joined, page.get_text("text")]


def read_arxiv_stamp(path: str | Path) -> ArxivStamp | None:
    """The arXiv stamp on page 1 of a PDF, or None when there is none. Raises NotAPdfError when MuPDF cannot
    open the file (not a PDF, damaged, encrypted) so a caller can record why."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            head = f.read(1024)
    except OSError as e:
        raise NotAPdfError(f"cannot read the file: {e}", source=str(p)) from e
    if not looks_like_pdf(head):  # MuPDF would happily open HTML or text as a document
        raise NotAPdfError("the file does not start with %PDF-", source=str(p), hint="an error page saved as .pdf?")
    try:
        doc = pymupdf.open(p, filetype="pdf")
    except Exception as e:  # MuPDF raises its own FileDataError, RuntimeError, ... for unreadable input
        raise NotAPdfError(f"cannot open as PDF: {e}", source=str(p)) from e
    try:
        if doc.needs_pass:
            raise NotAPdfError("the PDF is encrypted", source=str(p), hint="a password-protected PDF")
        if doc.page_count == 0:
            return None
        try:
            texts = _page_texts(doc.load_page(0))
        except Exception as e:  # damaged content stream on page 1
            raise NotAPdfError(f"cannot read page 1: {e}", source=str(p)) from e
        for text in texts:
            stamp = parse_stamp(text)
            if stamp is not None:
                return stamp
        # glyph-by-glyph stamps come out as "ar Xi v : 2301. 01234v 1 [ c s . CL] 3 J an 2023": last resort,
        # the rotated text with all spaces removed (only there: squashing body text could glue unrelated words)
        for text in texts[:-1]:
            stamp = parse_stamp("".join(text.split()))
            if stamp is not None:
                return stamp
        return None
    finally:
        doc.close()
