"""Page layout → reading-ordered text lines with the font facts heading detection needs.

PyMuPDF's `page.get_text("dict")` gives blocks → lines → spans with font size and flags. This module turns
that into a flat list of `Line`s in reading order and removes what is not paper text: running headers and
footers (lines that repeat in the page margins), page numbers, review-copy line numbers, the rotated arXiv
stamp (kept aside so the parser can read the id from it) and footnotes. Ligatures are expanded by MuPDF
(we do not ask it to preserve them) and any that survive are folded with NFKC.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

import pymupdf

# Dict extraction without images and without ligature preservation: faster, and "ﬁ" arrives as "fi".
TEXT_FLAGS = (
    pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE
) & ~pymupdf.TEXT_PRESERVE_LIGATURES

_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|medi\b|-medi|cmbx|\bbx|-b$|\.b$|,bold", re.I)
_LIGATURES = re.compile("[\ufb00-\ufb06]")
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[\divxlc]{1,5}(?:\s*(?:/|of)\s*\d+)?$", re.I)
_LINE_NUMBER = re.compile(r"^\d{1,4}$")


@dataclass(slots=True)
class Line:
    """One visual line of text with the facts used to classify it."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float  # character-weighted mean font size
    bold: bool  # most characters bold
    page: int  # 0-based
    block: int  # running block number (lines of one block are one paragraph candidate)
    first_in_block: bool = False
    last_in_block: bool = False
    col_left: bool = True  # starts in the left half of a two-column page
    marker: bool = False  # begins with a superscript/footnote marker (dropped from the text)
    # the text with raised numbers after a word kept as "[n]" (AIP/RSC/APS superscript citations: "flows.1,3");
    # None when the line has none. `text` drops or glues them as before; parse.py uses this only for papers
    # whose citations are superscripts (see papers.parse._superscript_citations)
    sup_text: str | None = None


@dataclass(slots=True)
class Layout:
    lines: list[Line]
    page_count: int
    page_width: float = 612.0
    body_size: float = 10.0
    vertical_text: list[str] = field(default_factory=list)  # rotated text on page 1 (arXiv stamp)
    footnotes: list[str] = field(default_factory=list)
    first_page_text: str = ""


# LaTeX's old font encodings print accents as separate spacing characters before the letter ("J´ozefowicz")
_SPACING_ACCENT = re.compile("([\u00b4`\u00a8\u02c6\u02dc\u02c7\u00b8])\\s?([A-Za-z\u0131])")
_COMBINING = {
    "\u00b4": "\u0301",
    "`": "\u0300",
    "\u00a8": "\u0308",
    "\u02c6": "\u0302",
    "\u02dc": "\u0303",
    "\u02c7": "\u030c",
    "\u00b8": "\u0327",
}


def _accent(m: re.Match[str]) -> str:
    base = "i" if m.group(2) == "\u0131" else m.group(2)
    return unicodedata.normalize("NFC", base + _COMBINING[m.group(1)])


_BOLD_CACHE: dict[str, bool] = {}


def _is_bold_font(font: str) -> bool:
    hit = _BOLD_CACHE.get(font)
    if hit is None:
        hit = _BOLD_CACHE[font] = bool(_BOLD_FONT.search(font))
    return hit


# a superscript citation: "1", "1,3", "2–4", "1,3-5" (not "a)", "*", "†" or an exponent like "−3")
_SUP_CITE = re.compile(r"\d{1,3}(?:\s*[,–\-]\s*\d{1,3})*")


def _clean(text: str) -> str:
    if _LIGATURES.search(text):
        text = _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    if _SPACING_ACCENT.search(text):
        text = _SPACING_ACCENT.sub(_accent, text)
    return text.replace("\u00ad", "").replace("\u00a0", " ")


def _page_lines(page: pymupdf.Page, pno: int, block_base: int, vertical: list[str]) -> list[Line]:
    """Lines of one page in reading order: blocks sorted into columns, same-row lines merged."""
    data = page.get_text("dict", flags=TEXT_FLAGS)
    width = float(data["width"])
    blocks: list[list[Line]] = []
    for b in data["blocks"]:
        if b.get("type", 0) != 0:
            continue
        rows: list[Line] = []
        for ln in b["lines"]:
            dx, dy = ln["dir"]
            spans = ln["spans"]
            if abs(dy) > 0.2 or abs(dx) < 0.8:
                if pno == 0:
                    vertical.append("".join(s["text"] for s in spans))
                continue
            nchar = 0
            size_sum = 0.0
            bold_chars = 0
            parts: list[str] = []
            sup_parts: list[str] = []
            has_sup = False
            cite_until = -1
            marker = False
            for si, s in enumerate(spans):
                t = s["text"]
                st = t.strip()
                n = len(st)
                flags = s["flags"]
                # a raised number list right after a word or punctuation ("flows.1,3", "shown2–4"): a citation
                cite = si <= cite_until  # inside a raised number list already taken as a citation
                if flags & 1 and parts and not cite:
                    end = si  # the run of consecutive raised spans ("5", "–", "7") read as one
                    while end + 1 < len(spans) and spans[end + 1]["flags"] & 1:
                        end += 1
                    raw = "".join(x["text"] for x in spans[si : end + 1])
                    run = raw.strip()
                    before = "".join(parts).rstrip()[-1:]
                    after = (
                        raw[-1:] if raw[-1:].isspace() else spans[end + 1]["text"][:1] if end + 1 < len(spans) else ""
                    )
                    # an exponent runs into what follows ("O(Re3)"); a citation ends at a space or punctuation
                    if (
                        _SUP_CITE.fullmatch(run)
                        and (before.isalpha() or before in ".,;:)")
                        and (not after or after.isspace() or after in ".,;:")
                    ):
                        sup_parts.append("[" + "".join(run.split()) + "]" + (" " if raw[-1:].isspace() else ""))
                        has_sup = cite = True
                        cite_until = end
                # superscript footnote / affiliation markers glue onto words ("word1"); drop short ones
                if flags & 1 and n and n <= 3 and not st.isalpha():
                    marker = marker or not parts
                    continue
                parts.append(t)
                if not cite:
                    sup_parts.append(t)
                if n:
                    nchar += n
                    size_sum += s["size"] * n
                    if flags & 16 or _is_bold_font(s["font"]):
                        bold_chars += n
            if not nchar:
                continue
            text = _clean("".join(parts)).strip()
            if not text:
                continue
            sup_text = _clean("".join(sup_parts)).strip() if has_sup else None
            x0, y0, x1, y1 = ln["bbox"]
            size = size_sum / nchar if nchar else 0.0
            bold = nchar > 0 and bold_chars >= 0.6 * nchar
            prev = rows[-1] if rows else None
            # same visual row (PyMuPDF splits at wide gaps, e.g. "1" and "Introduction")
            if prev is not None and abs(prev.y0 - y0) < 2.5 and abs(prev.y1 - y1) < 2.5 and x0 >= prev.x1 - 1:
                if sup_text is not None or prev.sup_text is not None:
                    prev.sup_text = f"{prev.sup_text or prev.text} {sup_text or text}"
                prev.text = f"{prev.text} {text}"
                prev.x1 = x1
                prev.bold = prev.bold and bold
                prev.size = max(prev.size, size) if len(prev.text) < 8 else prev.size
                continue
            rows.append(
                Line(text, x0, y0, x1, y1, size, bold, pno, 0, marker=marker or text[0] in "*∗†‡§¶", sup_text=sup_text)
            )
        if rows:
            blocks.extend(_split_run_in_headings(rows))
    ordered = _reading_order(blocks, width)
    out: list[Line] = []
    for i, rows in enumerate(ordered):
        rows[0].first_in_block = True
        rows[-1].last_in_block = True
        for r in rows:
            r.block = block_base + i
            out.append(r)
    return out


_NUMBERED_START = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,4}\.)\s+[A-Z]")


def _split_run_in_headings(rows: list[Line]) -> list[list[Line]]:
    """Some journal styles (JFM) set "1. Introduction" in body type inside the paragraph's block, separated
    only by a little extra space: such a short numbered line followed by a wider-than-usual gap becomes a block
    of its own, so heading detection sees it as a one-line block."""
    if len(rows) < 2:
        return [rows]
    pitches = sorted(b.y0 - a.y0 for a, b in itertools.pairwise(rows) if b.y0 > a.y0)
    # two-line blocks have no pitch of their own: assume the usual leading of 1.12 x the type size
    pitch = pitches[len(pitches) // 2] if len(pitches) >= 3 else 1.12 * max(r.size for r in rows)
    out: list[list[Line]] = []
    cur: list[Line] = []
    for k, r in enumerate(rows):
        prev = rows[k - 1] if k else None
        nxt = rows[k + 1] if k + 1 < len(rows) else None
        alone = (
            nxt is not None
            and len(r.text.split()) <= 8
            and _NUMBERED_START.match(r.text) is not None
            and r.text[-1:] not in ".,;:"
            and nxt.y0 - r.y0 > 1.1 * pitch
            and (prev is None or r.y0 - prev.y0 > 1.1 * pitch)
        )
        if alone:
            if cur:
                out.append(cur)
            out.append([r])
            cur = []
        else:
            cur.append(r)
    if cur:
        out.append(cur)
    return out


def _reading_order(blocks: list[list[Line]], width: float) -> list[list[Line]]:
    """Two-column aware order: full-width blocks cut the page into bands; within a band the left column is
    read before the right one. Single-column pages keep top-to-bottom order."""
    mid = width / 2

    def bbox(rows: list[Line]) -> tuple[float, float, float, float]:
        return (min(r.x0 for r in rows), min(r.y0 for r in rows), max(r.x1 for r in rows), max(r.y1 for r in rows))

    boxes = [(bbox(rows), rows) for rows in blocks]
    # only column-wide blocks count as evidence of two columns (author grids and table cells are narrow)
    left = sum(1 for (x0, _, x1, _), _ in boxes if x1 <= mid + 10 and x1 - x0 > 0.3 * width)
    right = sum(1 for (x0, _, x1, _), _ in boxes if x0 >= mid - 10 and x1 - x0 > 0.3 * width)
    if left < 2 or right < 2:  # not a two-column page: keep the stream order, it is top-to-bottom already
        return blocks
    items = sorted(boxes, key=lambda it: (it[0][1], it[0][0]))
    # bands are cut at each full-width block's vertical position
    cuts = sorted(box[1] for box, _ in items if _is_full(box, mid, width)) + _gap_cuts(items)
    cuts.sort()
    bands: list[list[tuple[tuple[float, float, float, float], list[Line]]]] = [[] for _ in range(len(cuts) + 1)]
    for it in items:
        bands[sum(1 for c in cuts if c <= it[0][1] + 0.1)].append(it)
    out: list[list[Line]] = []
    for band in bands:
        fulls = [it for it in band if _is_full(it[0], mid, width)]
        rest = [it for it in band if not any(it is f for f in fulls)]
        for it in sorted(fulls, key=lambda it: it[0][1]):
            out.append(it[1])
        lcol = sorted((it for it in rest if it[0][0] < mid - 5), key=lambda it: (it[0][1], it[0][0]))
        rcol = sorted((it for it in rest if it[0][0] >= mid - 5), key=lambda it: (it[0][1], it[0][0]))
        for it in lcol:
            out.append(it[1])
        for it in rcol:
            for r in it[1]:
                r.col_left = False
            out.append(it[1])
    return out


def _gap_cuts(items: list[tuple[tuple[float, float, float, float], list[Line]]], min_gap: float = 30.0) -> list[float]:
    """Heights where neither column has text for `min_gap` points: the page continues below in a new band
    (e.g. a reference list balanced over both columns under the last paragraphs)."""
    spans = sorted((box[1], box[3]) for box, _ in items)
    cuts: list[float] = []
    reach = spans[0][1] if spans else 0.0
    for y0, y1 in spans[1:]:
        if y0 - reach >= min_gap:
            cuts.append(y0 - 0.05)
        reach = max(reach, y1)
    return cuts


def _is_full(box: tuple[float, float, float, float], mid: float, width: float) -> bool:
    """A block spanning both columns (title, abstract in some styles, wide figures and tables)."""
    return box[0] < mid - 10 and box[2] > mid + 10 and (box[2] - box[0]) > 0.55 * width


def _margin_key(text: str) -> str:
    return _DIGITS.sub("#", text.lower()).strip()


def _drop_furniture(pages: list[list[Line]], heights: list[float]) -> list[list[Line]]:
    """Remove running headers/footers, page numbers and review line numbers."""
    n = len(pages)
    counts: Counter[str] = Counter()
    for lines, h in zip(pages, heights, strict=True):
        seen = {_margin_key(ln.text) for ln in lines if ln.y1 < 0.1 * h or ln.y0 > 0.9 * h}
        counts.update(seen)
    need = max(2, int(0.25 * n + 0.5)) if n >= 3 else 99
    out: list[list[Line]] = []
    for lines, h in zip(pages, heights, strict=True):
        # review-copy line numbers: many pure-number lines stacked at the same x on one page
        xs = Counter(round(ln.x0 / 8) for ln in lines if _LINE_NUMBER.match(ln.text))
        numbered_cols = {x for x, c in xs.items() if c >= 8}
        kept: list[Line] = []
        for ln in lines:
            margin = ln.y1 < 0.1 * h or ln.y0 > 0.9 * h
            if margin and (counts[_margin_key(ln.text)] >= need or _PAGE_NUMBER.match(ln.text)):
                continue
            if numbered_cols and _LINE_NUMBER.match(ln.text) and round(ln.x0 / 8) in numbered_cols:
                continue
            kept.append(ln)
        out.append(kept)
    return out


def _body_size(pages: list[list[Line]]) -> float:
    sizes: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            sizes[round(ln.size * 2) / 2] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _drop_footnotes(pages: list[list[Line]], heights: list[float], body: float, sink: list[str]) -> list[list[Line]]:
    """Footnotes: small-font blocks at the bottom of a column with no body-size text below them."""
    out: list[list[Line]] = []
    for lines, h in zip(pages, heights, strict=True):
        by_block: dict[int, list[Line]] = {}
        for ln in lines:
            by_block.setdefault(ln.block, []).append(ln)
        drop: set[int] = set()
        for bid, rows in by_block.items():
            top = min(r.y0 for r in rows)
            if top < 0.6 * h or max(r.size for r in rows) > body - 0.9:
                continue
            col = rows[0].col_left
            below = [
                r for r in lines if r.col_left == col and r.y0 > top + 1 and r.block != bid and r.size >= body - 0.5
            ]
            if not below and rows[0].marker:
                drop.add(bid)
                sink.append(" ".join(r.text for r in rows))
        out.append([ln for ln in lines if ln.block not in drop])
    return out


def extract_layout(doc: pymupdf.Document, *, max_pages: int | None = None) -> Layout:
    """All text lines of the document in reading order, page furniture removed."""
    pages: list[list[Line]] = []
    heights: list[float] = []
    vertical: list[str] = []
    width = 612.0
    block_base = 0
    first_page_text = ""
    for pno, page in enumerate(doc):
        if max_pages is not None and pno >= max_pages:
            break
        lines = _page_lines(page, pno, block_base, vertical)
        if pno == 0:
            width = float(page.rect.width)
            first_page_text = "\n".join(ln.text for ln in lines)
        block_base = (lines[-1].block + 1) if lines else block_base
        pages.append(lines)
        heights.append(float(page.rect.height))
    pages = _drop_furniture(pages, heights)
    body = _body_size(pages)
    footnotes: list[str] = []
    pages = _drop_footnotes(pages, heights, body, footnotes)
    flat = [ln for lines in pages for ln in lines]
    return Layout(flat, len(doc), width, body, vertical, footnotes, first_page_text)
