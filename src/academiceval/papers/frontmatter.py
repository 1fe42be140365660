"""Front matter of page 1: the title and the abstract, for arXiv preprints and journal layouts alike.

Journal first pages carry a lot of print furniture above and around the title, often in a type as large as
the title's: the Elsevier masthead ("Contents lists available at ScienceDirect" / journal name / "journal
homepage: ..."), running heads with volume and year ("PHYSICAL REVIEW E 100, 012203 (2019)"), article-type
labels ("Research Paper", "Original software publication"), DOI, copyright, received/accepted lines, and the
author and affiliation lines (which some conference styles set *larger* than the title). These lines are
classified first (`furniture_kind`) and never become the title; the title is then the largest remaining type
near the top of the page, joined over its wrapped lines, and over a subtitle set in another size
("Apple Neural Engine" / "Architecture, Programming, and Performance").

The abstract is the text after an "Abstract" marker (also spaced, "A B S T R A C T", and the combined Elsevier
"A R T I C L E I N F O A B S T R A C T" line), read in the marker's column so that the article-info column
(keywords, history) stays out; without a marker it is the first block of running prose between the title and
the first heading.
"""

from __future__ import annotations

import re

from academiceval.papers.layout import Layout, Line
from academiceval.papers.structure import join_lines, text_of

_SPACED = r"\s?"
_ABSTRACT_WORD = _SPACED.join("abstract")
_ABSTRACT_START = re.compile(
    rf"^(?:a\s?r\s?t\s?i\s?c\s?l\s?e\s+i\s?n\s?f\s?o\s+)?{_ABSTRACT_WORD}\b\s*[:.—–\-]?\s*", re.I
)
_ARTICLE_INFO = re.compile(r"^a\s?r\s?t\s?i\s?c\s?l\s?e\s+i\s?n\s?f\s?o\b|^article\s+(?:history|info)", re.I)
_ABSTRACT_END = re.compile(
    r"^(keywords|key\s?words|index terms|ccs concepts|acm reference|general terms|categories and subject|"
    r"\*?equal contribution|preprint|correspondence|mathematics subject|program summary|pacs\b|subject areas|"
    r"received\b|doi\s*:|published by|©|nomenclature\b)",
    re.I,
)

# print furniture on a first page: never a title, never abstract text
_FURNITURE = re.compile(
    r"contents lists available|journal homepage|sciencedirect|view article online|view journal|cite this|"
    r"\bdoi\s*[:.]|doi\.org|https?://|www\.|\bissn\b|©|\(c\)\s*\d{4}|copyright|all rights reserved|"
    r"licen[cs]ed under|creative commons|open access|\breceived\b|\baccepted\b|\bpublished\b|available online|"
    r"\brevised\b|article history|e-?mail|@|\borcid\b|corresponding author|arxiv|preprint submitted|"
    r"^submitted to|^to appear in|^accepted for|^under review|^published as|^in press",
    re.I,
)
# running heads and citation banners: volume/page/year ("PHYSICAL REVIEW E 100, 012203 (2019)",
# "Computer Physics Communications 266 (2021) 107396", "J. Fluid Mech. (2018), vol. 852, pp. 663–677")
_CITATION = re.compile(
    r"\((?:19|20)\d\d\)|\bvol\.?\s*\d|\bpp\.\s*\d|\b\d+\s*[,:]\s*\d{3,}\b|\bno\.\s*\d|"
    r"\b(?:19|20)\d\d\s*,\s*\d+\s*,\s*\d+",
    re.I,
)
_EVENT = re.compile(
    r"^\d+(?:st|nd|rd|th)\b|\b(?:conference|symposium|workshop|congress|proceedings|meeting)\b.*\b(?:19|20)\d\d\b|"
    r"\b(?:19|20)\d\d\b.*\b(?:conference|symposium|workshop|congress|proceedings)\b",
    re.I,
)
_ARTICLE_TYPE = re.compile(
    r"^(?:research(?: paper| article)?|original (?:article|research|paper|software publication)|review(?: article)?|"
    r"regular article|full length article|article|paper|letter|rapid communication|short communication|"
    r"brief communication|communication|technical note|perspective|editorial|computer programs in physics|"
    r"software article|invited paper|feature article|highlights?)$",
    re.I,
)
_AFFILIATION = re.compile(
    r"\b(?:universit\w*|institut\w*|department|dept\.|laborator\w*|school of|college|cent(?:er|re) for|"
    r"faculty of|division of|academy|hospital|inc\.|corporation|gmbh|ltd\b|national lab\w*|research center|"
    r"\bcnrs\b|\bpo box|p\.o\. box)",
    re.I,
)
_PARTICLES = {
    "de",
    "da",
    "di",
    "del",
    "della",
    "der",
    "den",
    "van",
    "von",
    "le",
    "la",
    "du",
    "dos",
    "das",
    "y",
    "bin",
    "ter",
}
_NAME_TOKEN = re.compile(r"^(?:[A-Z][a-z]?\.(?:-?[A-Z][a-z]?\.)*|[A-Z][\w'’\-]*\.?|Jr\.?|Sr\.?|I{1,3}|IV)$")
_INITIAL = re.compile(r"^[A-Z]\.(?:-?[A-Z]\.)*$|^[A-Z]$")
_MARKS = re.compile(r"[*∗†‡§¶#✉⁎,]+")
_FUNCTION_WORDS = {
    "for",
    "of",
    "the",
    "in",
    "on",
    "to",
    "via",
    "by",
    "at",
    "with",
    "from",
    "an",
    "a",
    "as",
    "is",
    "its",
}


# affiliation letters after a name ("Bryngelson ab", "Fox bc"): letters from the start of the alphabet, never a
# word ("Big Self-Supervised Models are" is a title line, not "Big Self-Supervised Models" + marks "are")
_MARK_LETTERS = re.compile(r"[a-h]{1,3}")
_MARK_WORDS = {"be", "he", "had", "bed", "fed", "add", "age", "ace", "bad", "bag", "cab", "dad", "ache"}


def _affiliation_mark(token: str) -> bool:
    return token.isdigit() or (bool(_MARK_LETTERS.fullmatch(token)) and token not in _MARK_WORDS | _PARTICLES)


def _name_piece(piece: str) -> tuple[bool, bool]:
    """(looks like one person's name, has an initial)."""
    tokens = [t for t in piece.split() if t]
    # affiliation letters after a name ("Bryngelson ab", "Fox bc"), or numbers ("Chu 1")
    while tokens and _affiliation_mark(tokens[-1]) and tokens[-1] not in _FUNCTION_WORDS - {"a"}:
        tokens.pop()
    if not 2 <= len(tokens) <= 5:
        return False, False
    initial = False
    for t in tokens:
        if t in _PARTICLES:
            continue
        if not _NAME_TOKEN.match(t):
            return False, False
        initial = initial or bool(_INITIAL.match(t))
    return True, initial


def is_author_line(text: str) -> bool:
    """A line of person names ("Spencer H. Bryngelson* and Tim Colonius", "A. Bati a, S. H. Bryngelson b")."""
    words = re.findall(r"[A-Za-z]+", text)
    if not words or any(w in _FUNCTION_WORDS - {"a"} for w in words):
        return False  # "Retrieval-Augmented Generation for": a title wrapped before its last words
    t = re.sub(r"(?<=[A-Za-z.])\d+(?:,\d+)*", "", text)  # superscript affiliation numbers glued on
    marked = bool(re.search(r"[*∗†‡§¶✉⁎]", t)) or any(
        _affiliation_mark(m.group(1)) for m in re.finditer(r"\b([a-z]{1,3})\s*(?:,|$)", t)
    )
    t = _MARKS.sub(",", t)
    pieces = [p.strip() for p in re.split(r",|;|\band\b|&", t) if p.strip()]
    pieces = [p for p in pieces if not _affiliation_mark(p)]  # stray affiliation marks
    if not pieces:
        return False
    looks = [_name_piece(p) for p in pieces]
    if not all(ok for ok, _ in looks):
        return False
    if len(pieces) == 1:
        return looks[0][1] or marked
    return len(pieces) >= 3 or any(init for _, init in looks) or marked


def furniture_kind(ln: Line, prev: Line | None = None, nxt: Line | None = None) -> str | None:
    """Why a first-page line is not title text (None: it may be)."""
    text = ln.text.strip()
    low = text.lower()
    if _FURNITURE.search(text):
        return "banner"
    if nxt is not None and "journal homepage" in nxt.text.lower():
        return "journal"
    if prev is not None and "contents lists available" in prev.text.lower():
        return "journal"
    if _CITATION.search(text) and sum(1 for w in text.split() if w[:1].islower()) <= 3:
        return "running-head"
    if _EVENT.search(text):
        return "event"
    if _ARTICLE_TYPE.match(low.rstrip(".: ")):
        return "article-type"
    if _ABSTRACT_START.match(text) or _ARTICLE_INFO.match(text) or _ABSTRACT_END.match(text):
        return "marker"
    if _AFFILIATION.search(text):
        return "affiliation"
    if is_author_line(text):
        return "authors"
    return None


def _journal_names(lines: list[Line]) -> set[str]:
    """Short lines repeated inside a citation banner of the same page ("Soft Matter" in "Cite this: Soft
    Matter, 2026, 22, 3207"): the journal's name set large at the top."""
    # a banner is a running head or a "Cite this" line, not any sentence with a number in it ("AlphaCode achieved
    # ... top 54.3%" must not make "AlphaCode" a journal name)
    banners = [
        ln.text.lower() for ln in lines if furniture_kind(ln) == "running-head" or "cite this" in ln.text.lower()
    ]
    out: set[str] = set()
    for ln in lines:
        t = ln.text.strip().lower()
        if 1 <= len(t.split()) <= 6 and len(t) >= 4 and any(t in b and t != b.strip() for b in banners):
            out.add(t)
    return out


def find_title(layout: Layout) -> tuple[str, int]:
    """Largest type near the top of page 1 (page 2 after a cover) that is not furniture; returns the title and
    the index of its last line."""
    lines = layout.lines
    for page in (0, 1):
        idx = [i for i, ln in enumerate(lines) if ln.page == page]
        if not idx:
            continue
        page_lines = [lines[i] for i in idx]
        journals = _journal_names(page_lines)
        kinds: dict[int, str | None] = {}
        for k, i in enumerate(idx):
            prev = lines[idx[k - 1]] if k else None
            nxt = lines[idx[k + 1]] if k + 1 < len(idx) else None
            kind = furniture_kind(lines[i], prev, nxt)
            if kind is None and lines[i].text.strip().lower() in journals:
                kind = "journal"
            kinds[i] = kind
        cands = [
            i
            for i in idx
            if kinds[i] is None
            and len(lines[i].text) > 3
            and lines[i].y0 < 500
            and sum(c.isalpha() for c in lines[i].text) >= 3
        ]
        # the abstract marker ends the search: nothing below it is the title
        marker = next((i for i in idx if _ABSTRACT_START.match(lines[i].text) and len(lines[i].text) < 40), None)
        if marker is not None:
            cands = [i for i in cands if i < marker] or cands
        if not cands:
            continue
        big = max(lines[i].size for i in cands)
        first = next(i for i in cands if lines[i].size >= big - 0.6)
        first, prefix = _title_start(layout, idx, kinds, first)
        parts, last = _title_lines(layout, idx, kinds, first, big)
        title = join_lines([*prefix, *parts]) if prefix else join_lines(parts)
        title = re.sub(r"\s+:", ":", title)  # "AGENTLESS : Demystifying" (a space before a small-caps colon)
        if len(title) >= 8:
            return title, last
    return "", -1


# a first-page kind that a line set in the title's own type may still have: title words can look like names
# ("A Survey", "Big Self-Supervised Models are"), an event ("... Revisiting the 2014 NeurIPS Experiment") or the
# word Abstract ("Improving Medical Dialogue Generation with / Abstract Meaning Representations")
_TITLE_LIKE_KINDS = {"authors", "event", "marker"}
_BARE_MARKER = re.compile(rf"^{_ABSTRACT_WORD}\s*(?:[:.—–\-]|$)", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def _caps(text: str, least: int = 3) -> bool:
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= least and all(c.isupper() for c in letters)


def _same_type(ln: Line, ref: Line) -> bool:
    """Set like `ref`: the same size, weight and capitalisation (authors under an all-caps title are not)."""
    # a short all-caps name ("BERT:") does not make the whole title all caps
    return abs(ln.size - ref.size) <= 0.6 and ln.bold == ref.bold and (_caps(ln.text) or not _caps(ref.text, 12))


def _is_name_part(text: str) -> bool:
    """A system name ending in a colon, set apart from the rest of the title ("Ready Cohorts:", "AGENTLESS :")."""
    t = text.strip()
    return t.endswith(":") and 1 <= len(t[:-1].split()) <= 3


def _title_kind_ok(ln: Line, kind: str | None) -> bool:
    """Whether a line with this first-page kind may still be title text when set in the title's type: only a
    name-like line without the marks of a real author list (commas, "and", footnote marks, affiliation numbers)."""
    if kind == "authors" and re.search(r",|;|&|\band\b|[*∗†‡§¶✉⁎\d]", ln.text):
        return False
    return kind is None or (kind in _TITLE_LIKE_KINDS and not _BARE_MARKER.match(ln.text.strip()))


def _title_start(layout: Layout, idx: list[int], kinds: dict[int, str | None], first: int) -> tuple[int, list[str]]:
    """Lines above the largest title line that belong to the title: earlier lines of the title in the same type
    that the furniture rules took for something else, and a short system name set on its own line in another
    size ("AGENTLESS :", "PROMPT2MODEL:", "olmOCR 2") right above the rest. Returns the first title line and the
    name line(s) to put before it ("NAME:" then the title)."""
    lines = layout.lines
    pos = idx.index(first)
    while pos > 0:
        i = idx[pos - 1]
        ln, nxt = lines[i], lines[idx[pos]]
        gap = nxt.y0 - ln.y1
        if not (-0.3 * nxt.size < gap < 0.9 * nxt.size and _same_type(ln, nxt) and _title_kind_ok(ln, kinds[i])):
            break
        pos -= 1
    start = idx[pos]
    if pos == 0:
        return start, []
    i = idx[pos - 1]
    ln, top = lines[i], lines[start]
    text = ln.text.strip()
    gap = top.y0 - ln.y1
    name = (
        kinds[i] is None
        and 1 <= len(text.split()) <= 3
        and not _YEAR.search(text)
        and sum(c.isalpha() for c in text) >= 3
        and -0.3 * top.size < gap < 0.8 * top.size  # line boxes of some fonts overlap a little
        and max(layout.body_size + 1, 0.5 * top.size) <= ln.size < top.size - 0.6
        and ln.x1 > top.x0
        and ln.x0 < top.x1
        and ":" not in top.text
    )
    if not name:
        return start, []
    return start, [text if text.endswith(":") else text + ":"]


def _title_lines(
    layout: Layout, idx: list[int], kinds: dict[int, str | None], first: int, big: float
) -> tuple[list[str], int]:
    """The title's lines from `first` on: wrapped lines in the same type, and a subtitle in another size right
    under a short title ("Apple Neural Engine" / "Architecture, ..."), never the author line under it."""
    lines = layout.lines
    parts = [lines[first].text]
    last = first
    pos = idx.index(first)
    for k in range(pos + 1, min(pos + 8, len(idx))):
        i = idx[k]
        ln, prev = lines[i], lines[last]
        gap = ln.y0 - prev.y1
        if gap > 2.5 * ln.size or gap < -ln.size:
            break
        if kinds[i] is not None:
            # a wrapped title line that only looks like furniture: same type, tight under the previous line
            if not (_title_kind_ok(ln, kinds[i]) and _same_type(ln, prev) and gap < 0.9 * ln.size):
                break
            parts.append(ln.text)
            last = i
            continue
        # a short "NAME:" in another weight before the rest of the title ("Ready Cohorts:" bold, then regular)
        after_name = len(parts) == 1 and _is_name_part(parts[0]) and abs(ln.size - prev.size) <= 0.6
        same = (
            _same_type(ln, prev)
            or after_name
            or (ln.block == prev.block and ln.size >= 0.85 * big and ln.bold == prev.bold)
        )
        nxt_kind = kinds.get(idx[k + 1]) if k + 1 < len(idx) else None
        sub = (
            len(parts) == 1
            and len(parts[0].split()) <= 6
            and ":" not in parts[0]
            and ln.size >= layout.body_size + 2
            and gap < 1.5 * max(ln.size, prev.size)
            and not is_author_line(ln.text)
            and nxt_kind not in ("affiliation", "banner")  # a name over its affiliation or e-mail is the author
        )
        if not (same or sub):
            break
        if sub and not same and parts[-1][-1:] not in ":—–-":
            parts[-1] += ":"
        parts.append(ln.text)
        last = i
    return parts, last


def _is_marker(ln: Line) -> re.Match[str] | None:
    m = _ABSTRACT_START.match(ln.text)
    if not m:
        return None
    head = ln.text[: m.end()].strip()
    if len(ln.text) < 40 or ln.bold or head[-1:] in ".:—–-" or head.replace(" ", "").isupper():
        return m
    return None


def find_abstract(layout: Layout, title_end: int, first_heading: int) -> str:
    """Text after an "Abstract" marker (in its column), else the first prose block after the title."""
    lines = layout.lines
    stop = first_heading if first_heading >= 0 else min(len(lines), title_end + 200)
    lo = max(0, title_end + 1)
    # a cover page and a copyright page may come first: the marker is looked for on the first three pages
    marker = next((i for i in range(lo, min(stop, len(lines))) if lines[i].page <= 2 and _is_marker(lines[i])), None)
    if marker is None:
        # the marker may sit above the end of a misread title block (side-by-side columns)
        marker = next((i for i in range(0, lo) if lines[i].page <= 1 and _is_marker(lines[i])), None)
    if marker is not None:
        text = _after_marker(layout, marker, stop)
        if text.strip():
            return text
    return _first_prose(layout, lo, stop)


def _after_marker(layout: Layout, marker: int, stop: int) -> str:
    lines = layout.lines
    mk = lines[marker]
    m = _ABSTRACT_START.match(mk.text)
    lead = mk.text[m.end() :].strip() if m else ""
    combined = bool(_ARTICLE_INFO.match(mk.text))  # "A R T I C L E I N F O A B S T R A C T" in one line
    width = layout.page_width
    chosen: list[Line] = []
    if lead:
        chosen.append(Line(lead, mk.x0, mk.y0, mk.x1, mk.y1, mk.size, mk.bold, mk.page, mk.block))
    total = len(lead)
    size = None
    blocks: dict[int, list[Line]] = {}
    for k in range(marker + 1, min(stop, len(lines))):
        blocks.setdefault(lines[k].block, []).append(lines[k])
    skip: set[int] = set()
    for b, rows in blocks.items():
        bw = max(r.x1 for r in rows) - min(r.x0 for r in rows)
        if _ARTICLE_INFO.match(rows[0].text) or (
            rows[0].text.lower().startswith(("keywords", "key words", "article history", "received")) and total < 100
        ):
            skip.add(b)
        elif bw < 0.3 * width and len(blocks) > 1:
            skip.add(b)  # the narrow article-info column (keywords, history, code links)
        elif not combined and max(r.x1 for r in rows) < mk.x0:
            skip.add(b)  # wholly left of the marker: the other column
    prev: Line | None = None
    for k in range(marker + 1, min(stop, len(lines))):
        ln = lines[k]
        if _ABSTRACT_END.match(ln.text) or _ARTICLE_INFO.match(ln.text):
            if total >= 100:
                break
            continue
        if ln.block in skip:
            continue
        if size is None:
            size = ln.size
        new_block = prev is not None and ln.block != prev.block
        if total >= 200 and ln.bold and not (prev and prev.bold) and len(ln.text) < 40:
            break  # a run-in sub-heading after the abstract ("Program summary")
        if new_block and total >= 300 and (abs(ln.size - size) > 0.6 or ln.page != mk.page):
            break
        if new_block and total >= 3000:
            break
        chosen.append(ln)
        total += len(ln.text)
        prev = ln
    return text_of(chosen)


def _first_prose(layout: Layout, lo: int, stop: int) -> str:
    """First run of prose lines (one type size, no vertical gap) after the title: author, affiliation and
    received/accepted blocks are not prose; keywords lines end a run."""
    lines = layout.lines
    runs: list[list[Line]] = []
    for ln in lines[lo:stop]:
        last = runs[-1][-1] if runs and runs[-1] else None
        if (
            last is not None
            and len(runs[-1]) >= 3
            and (ln.x1 < min(r.x0 for r in runs[-1]) or ln.x0 > max(r.x1 for r in runs[-1]))
        ):
            continue  # a side column next to the prose (DOI, journal link, received/accepted)
        if ln.page > 1 or _ABSTRACT_END.match(ln.text):
            runs.append([])
            continue
        # one paragraph: the next line of the same text block, or close under the last one (some fonts give
        # lines boxes far shorter than their leading, so the block is the better evidence where there is one)
        if (
            last is not None
            and last.page == ln.page
            and abs(last.size - ln.size) <= 0.4
            and (ln.block == last.block or 0 <= ln.y0 - last.y1 < 0.8 * ln.size)
        ):
            runs[-1].append(ln)
        else:
            runs.append([ln])
    runs = [r for r in runs if r]
    for r in runs:
        if _prose_score(r) > 0 and sum(len(x.text) for x in r) >= 300:
            return text_of(r)
    if not runs:
        return ""
    best = max(runs, key=_prose_score)
    text = text_of(best)
    return text if len(text) >= 200 and _prose_score(best) > 0 else ""


def _prose_score(rows: list[Line]) -> float:
    """Characters of running prose: author and affiliation blocks are mostly capitalised words."""
    words = [w for r in rows for w in r.text.split()]
    if not words:
        return 0.0
    lower = sum(1 for w in words if w[:1].islower()) / len(words)
    return sum(len(r.text) for r in rows) * lower if lower >= 0.4 else 0.0
