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
from academiceval.papers.models import Reference
from academiceval.papers.structure import join_lines

_BRACKET_LABEL = re.compile(r"^\[(\d{1,4}|[A-Za-z][A-Za-z+\-]*\d{2,4}[a-z]?)\]\s*")
_DOT_LABEL = re.compile(r"^(\d{1,4})\.\s+(?=\S)")
# bare numbers ("7 J. M. Murray, Phys. Rev. ...": APS/RSC/AIP two-column styles)
_BARE_LABEL = re.compile(r"^(\d{1,4})\s+(?=[A-Z\u00c0-\u024f])")
# AIP/APS superscript-style lists print the number glued to the first author: "1S. B. Pope, Turbulent Flows"
_GLUED_LABEL = re.compile(r"^(\d{1,3})(?=[A-Z\u00c0-\u024f])")
ALPHA_LABEL = re.compile(r"^[A-Za-z][A-Za-z+\-]*\d{2,4}[a-z]?$")
_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d{2})[a-z]?(?![\d])")
_ARXIV = re.compile(
    r"(?:arxiv(?:\s*preprint)?\s*(?:abs/)?[:\s]*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})"
    r"(?:v\d+)?",
    re.I,
)
# a full stop that ends a sentence-like segment (not an initial such as "J." or "et al.")
_SEGMENT_END = re.compile(r"(?<![A-Z])(?<!\bvs)(?<!\bEd)(?<!\bed)(?<!\bpp)\.\s+(?=[A-Z0-9“\"'(]|arXiv|arxiv)")
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
    raw = re.sub(r"\s+", " ", raw).strip()
    years = [int(m.group(1)) for m in _YEAR.finditer(raw)]
    year = years[0] if years else None
    m = _ARXIV.search(raw)
    arxiv_id = m.group(1) if m else None
    authors, title = _authors_title(raw)
    return Reference(index=index, raw=raw, label=label, authors=authors, year=year, title=title, arxiv_id=arxiv_id)


def _authors_title(raw: str) -> tuple[list[str], str | None]:
    # IEEE/ACM quoted titles: 'A. Author and B. Author, “Title,” in Venue, 2020.'
    q = re.match(r"^(?P<a>[^“”\"]{3,400}?)[,.:]?\s*[“\"](?P<t>[^”\"]{5,400})[”\"]", raw)
    if q and _looks_like_names(q.group("a")):
        return _split_authors(q.group("a")), q.group("t").strip(" ,.") or None
    # author-year: "Names. 2020. Title. Venue" / "Names (2020). Title. Venue" / "Names, 2020. Title"
    m = re.match(r"^(?P<a>.{3,400}?)[\s,.]*\(?(?:19|20)\d{2}[a-z]?\)?[.,:]\s+(?P<rest>.+)$", raw)
    if m and _looks_like_names(m.group("a")):
        author_part, rest = m.group("a"), m.group("rest")
        title = _SEGMENT_END.split(rest, maxsplit=1)[0]
    else:
        segs = _SEGMENT_END.split(raw, maxsplit=2)
        author_part = segs[0]
        title = segs[1] if len(segs) > 1 else None
        if not _looks_like_names(author_part):
            author_part, title = "", segs[0]
    title = title.strip(' .,"“”') if title else None
    authors = _split_authors(author_part)
    if not authors or not title:
        got = _consume_names(raw)
        if got is not None and got[1]:
            names, rest, comma_title = got
            # Elsevier style ends the title at a comma ("..., Title, in: Venue"), others at a full stop
            end = re.search(r",\s" if comma_title else r"\.\s", rest)
            title = (rest[: end.start()] if end else rest).strip(' .,"“”') or title
            authors = [_flip(n) for n in names if n.lower() not in {"and", "others"}]
    return authors, (title or None)


def _flip(name: str) -> str:
    """ "Abadi, D. J." → "D. J. Abadi"; other names unchanged."""
    if "," in name:
        last, first = name.split(",", 1)
        return f"{first.strip()} {last.strip()}".strip()
    return name


_W = r"[A-Z][\w'’\-]+"
_PARTICLE = r"(?:(?:van|von|de|der|da|di|del|la|le|dos)\s)*"
_INIT = r"(?:[A-Z]\.\s?-?\s?)+"
_INIT_FIRST = re.compile(rf"{_INIT}(?:{_W}\s)?{_PARTICLE}{_W}(?:-{_W})?")  # "P. A. Estevez"
_SURNAME_FIRST = re.compile(rf"{_PARTICLE}{_W}(?:\s{_W})?,\s{_INIT}")  # "Abadi, D. J."
_NAME_SEP = re.compile(r"\s*(?:,\s*and\s+|,\s*&\s*|\s+and\s+|\s*&\s*|,\s*)", re.I)


def _consume_names(raw: str) -> tuple[list[str], str, bool] | None:
    """Read a leading list of initialled names ("A. B. Smith, C. Doe and ..." or "Smith, A. B., Doe, C.
    and ..."); returns (names, rest, comma_separated_title)."""
    pos, names, comma_title = 0, [], False
    while True:
        m = _SURNAME_FIRST.match(raw, pos) or _INIT_FIRST.match(raw, pos)
        if not m:
            break
        names.append(m.group(0).strip(" ,"))
        pos = m.end()
        s = _NAME_SEP.match(raw, pos)
        if not s:
            break
        # a comma followed by something that is not a name: the title comes next, ended by a comma too
        comma_title = s.group(0).strip() == ","
        pos = s.end()
    if not names:
        return None
    rest = raw[pos:]
    rest = re.sub(r"^(?:et al\.?|and others)\s*", "", rest).lstrip(" .,:;")
    if not comma_title or re.match(r"^(?:et al|and others)", raw[pos:]):
        comma_title = False
    return names, rest, comma_title


def _looks_like_names(s: str) -> bool:
    words = s.replace(",", " ").split()
    if not words or len(words) > 80:
        return False
    caps = sum(1 for w in words if w[:1].isupper() or w in {"and", "&", "et", "al.", "de", "van", "der", "von"})
    return caps >= 0.7 * len(words)


def _split_authors(s: str) -> list[str]:
    s = re.sub(r"\bet al\.?", "", s).strip(" ,.")
    pieces = [p.strip() for p in re.split(r",\s*and\s+|\s+and\s+|\s*&\s*|;\s*|,\s*", s) if p.strip()]
    names: list[str] = []
    for p in pieces:
        if names and _INITIALS.match(p) and " " not in names[-1].strip():
            names[-1] = f"{p} {names[-1]}".strip()  # "Smith, J." → "J. Smith"
        else:
            names.append(p)
    return [n for n in names if any(c.isalpha() for c in n) and n.lower() not in {"and", "others"}][:100]


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
