"""unarXive JSONL → pre-parsed `Paper` objects (plus their `PaperMeta` from the Kaggle-style metadata block).

unarXive already split each paper's LaTeX into paragraphs tagged with their section, replaced formulas and
citations by `{{formula:…}}` / `{{cite:…}}` markers and resolved bib entries (often to arXiv ids). We turn that
into the project's `Paper`: one `Section` per (heading, number, level), citation markers rendered as numeric
`[n]` with `Citation` spans pointing at `references[n-1]`, formulas as inline `$…$` LaTeX.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

from academiceval.papers.references import parse_reference as _parse_reference  # authors, year, title, arXiv id
from academiceval.papers.roles import assign_roles, inherit_roles
from academiceval.papers.roles import role_of as _classify_heading  # PDF-parsed and pre-parsed papers agree on roles
from academiceval.sources.errors import InvalidArxivIdError, RecordParseError
from academiceval.sources.ids import ARXIV_ID_RE, parse_arxiv_id
from academiceval.sources.mirror.records import MirrorRecord, kaggle_to_record, read_json_lines
from academiceval.store.paper_models import Citation, Paper, Reference, Section, SectionRole

PARSER_VERSION = "unarxive-jsonl/3"  # 2: real section hierarchy, front matter out of the body; 3: venue, DOI
_MARKER = re.compile(r"\{\{(cite|formula|figure|table|ref|footnote):([^}]*)\}\}")
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_LEVELS = {"section": 1, "subsection": 2, "subsubsection": 3, "paragraph": 4}


_ROLE_WORDS: list[tuple[re.Pattern[str], SectionRole]] = [
    (re.compile(r"^(introduction|intro|motivation|overview)\b"), SectionRole.introduction),
    (
        re.compile(r"^(related\s+work|related\s+literature|background|prior\s+work|previous\s+work|literature)"),
        SectionRole.related_work,
    ),
    (
        re.compile(r"^(conclusions?|concluding|summary(\s+and)?|discussion\s+and\s+conclusions?)\b"),
        SectionRole.conclusion,
    ),
    (re.compile(r"^(acknowledge?ments?|acknowledgments?)\b"), SectionRole.acknowledgements),
    (re.compile(r"^(references|bibliography)\b"), SectionRole.references),
    (re.compile(r"^(appendix|appendices|supplementary)\b"), SectionRole.appendix),
    (re.compile(r"^(method|methods|methodology|approach|model|our\s+approach|proposed)"), SectionRole.method),
    (re.compile(r"^(experiments?|experimental|evaluation|results)"), SectionRole.experiments),
]


def heading_role(heading: str) -> SectionRole | None:
    """The role a heading names: `papers.roles.role_of` when importable, else a small fallback table."""
    if _classify_heading is not None:
        try:
            role = _classify_heading(heading)
            return SectionRole(role) if role else None
        except Exception:
            pass
    h = re.sub(r"^(?:[\dIVX]+(?:\.\d+)*\.?|[A-Z]\.)\s+", "", heading.strip()).lower()
    for pat, role in _ROLE_WORDS:
        if pat.match(h):
            return role
    return None


def _render(
    text: str, spans_cite: dict[str, int], ref_entries: dict[str, Any], section_index: int
) -> tuple[str, list[Citation]]:
    """Replace markers; cite markers become "[n]" and are recorded as citations with their new spans."""
    out: list[str] = []
    cites: list[Citation] = []
    pos = 0
    length = 0
    for m in _MARKER.finditer(text):
        chunk = text[pos : m.start()]
        out.append(chunk)
        length += len(chunk)
        kind, ref_id = m.group(1), m.group(2)
        rep = ""
        if kind == "cite":
            idx = spans_cite.get(ref_id)
            if idx is not None:
                rep = f"[{idx + 1}]"
                cites.append(
                    Citation(
                        section_index=section_index,
                        start=length,
                        end=length + len(rep),
                        text=rep,
                        style="numeric",
                        reference_indices=[idx],
                    )
                )
        elif kind == "formula":
            latex = " ".join(str((ref_entries.get(ref_id) or {}).get("latex") or "").split())
            rep = f"${latex}$" if latex and len(latex) <= 300 else "[formula]"
        out.append(rep)
        length += len(rep)
        pos = m.end()
    out.append(text[pos:])
    rendered = "".join(out)
    for a, b in itertools.pairwise(cites):  # "[1], [2]" or "[1][2]": a group
        if rendered[a.end : b.start].strip(" ,;") == "":
            a.grouped = b.grouped = True
    return rendered, cites


_NOT_A_TITLE = re.compile(r"\bdoi\b|\bpp\.?\s*\d|\barxiv\s*:|^\W*\d|\bvol\.\s*\d", re.IGNORECASE)


def _next_number(n: str) -> str:
    if n.isdigit():
        return str(int(n) + 1)
    if len(n) == 1 and n.isalpha() and n.upper() != "Z":
        return chr(ord(n) + 1)
    return ""


def _place(
    number: str,
    level: int,
    stack: list[tuple[int, str, str]],
    numbered: dict[str, int],
    sections: list[Section],
    texts: list[list[str]],
) -> tuple[str, int, int]:
    """Full number and level of a new heading, given the open sections; restores parents that unarXive lost.

    unarXive numbers headings either in full ("2.1") or within their parent ("1"). A level-1 section without a
    paragraph of its own never appears, so its subsections would follow the previous section: a full number
    names the real parent ("2" for "2.1"); a local number that restarts ("1" after "1.3") shows a new parent.
    Returns (full number, level, placeholders added)."""
    while stack and stack[-1][0] >= level:
        prev = stack.pop()
        restart = number and "." not in number and prev[2] and _restarts(prev[2], number)
        if prev[0] == level and level in (2, 3) and restart:
            # sibling numbering restarted: the parent (one level up) changed without a paragraph of its own
            parent = stack[-1] if stack else None
            if parent is not None and parent[0] == level - 1:
                stack.pop()
                nxt = _next_number(parent[2])
                full_parent = (parent[1].rsplit(".", 1)[0] + "." if "." in parent[1] else "") + nxt if nxt else ""
                sections.append(Section(heading="", number=full_parent or None, level=level - 1, role=None))
                texts.append([])
                stack.append((level - 1, full_parent, nxt))
                return (f"{full_parent}.{number}" if full_parent else number), level, 1
    if level in (2, 3) and number and "." in number:
        parent_full = number.rsplit(".", 1)[0]
        open_parent = stack[-1][1] if stack else ""
        if parent_full != open_parent and parent_full not in numbered:
            while stack and stack[-1][0] >= level - 1:
                stack.pop()
            sections.append(Section(heading="", number=parent_full, level=level - 1, role=None))
            texts.append([])
            numbered[parent_full] = len(sections) - 1
            stack.append((level - 1, parent_full, parent_full.rsplit(".", 1)[-1]))
            return number, level, 1
        return number, level, 0
    if level > 1 and number:
        parent = stack[-1][1] if stack else ""
        return (f"{parent}.{number}" if parent else number), level, 0
    return number, (level if stack or level == 1 else 1), 0


def _fill_number_gaps(sections: list[Section], citations: list[Citation]) -> int:
    """A level-1 numbering gap ("1" then "3", or "1", restored "2", then "4") means one more section was lost than
    the restarts of subsection numbers showed: the subsections right after the last headed section (its first
    group) belonged to the first lost one. A placeholder is inserted before that group, the restored placeholders
    after it move up by one, and citation section indices are shifted."""
    tops = [i for i, s in enumerate(sections) if s.level == 1 and (s.number or "").isdigit()]
    for a, b in itertools.pairwise(tops):
        if int(sections[b].number or 0) - int(sections[a].number or 0) <= 1:
            continue
        r = a
        while r in tops and sections[r].heading == "" and tops.index(r) > 0:
            r = tops[tops.index(r) - 1]
        first_sub = r + 1
        if sections[r].heading == "" or first_sub >= len(sections) or sections[first_sub].level != 2:
            return 0
        pr = sections[r].number or ""
        sections.insert(first_sub, Section(heading="", number=str(int(pr) + 1), level=1, role=None))
        for x in sections[first_sub + 1 : b + 1]:
            if not x.number:
                continue
            head, _, tail = x.number.partition(".")
            if head.isdigit() and int(head) >= int(pr):
                x.number = str(int(head) + 1) + ("." + tail if tail else "")
        for c in citations:
            if c.section_index >= first_sub:
                c.section_index += 1
        return 1
    return 0


def _restarts(prev_local: str, local: str) -> bool:
    if prev_local.isdigit() and local.isdigit():
        return int(local) <= int(prev_local)
    return False


def _plausible_title(title: str | None) -> bool:
    """Physics-style entries have no title ("Phys. Rev. Lett. 77, 3865"); what the parser then returns is a
    journal or page fragment. Such strings would only cost title look-ups that cannot match, so they are dropped."""
    if not title:
        return False
    words = [w for w in re.findall(r"[^\W\d_]+", title) if len(w) >= 3]
    return len(words) >= 2 and not _NOT_A_TITLE.search(title)


def _reference(i: int, entry: dict[str, Any]) -> Reference:
    """One bib entry → Reference. unarXive's own resolved ids win; authors, title and year (and an arXiv id when
    unarXive found none) are read from the raw string by the papers stage's parser, so a round can resolve the
    citation by fuzzy title when there is no id."""
    raw = " ".join(str(entry.get("bib_entry_raw") or "").split())
    parsed: Reference | None = None
    if _parse_reference is not None and raw:
        try:
            parsed = _parse_reference(i, str(i + 1), raw)
        except Exception:  # a parser bug on one odd string must not lose the paper; ids and year still count
            parsed = None
    arxiv_id = None
    candidates = [
        str((entry.get("ids") or {}).get("arxiv_id") or ""),
        *map(str, entry.get("contained_arXiv_ids") or []),
    ]
    for c in candidates:
        m = ARXIV_ID_RE.search(c) if c else None
        if m:
            try:
                arxiv_id = parse_arxiv_id(m.group(0))[0]
                break
            except InvalidArxivIdError:
                continue
    if arxiv_id is None and parsed is not None and parsed.arxiv_id:
        try:
            arxiv_id = parse_arxiv_id(parsed.arxiv_id)[0]
        except InvalidArxivIdError:
            arxiv_id = None
    # years inside arXiv ids ("arXiv:2009.13044 (2020)") are not the year of the work
    no_ids = ARXIV_ID_RE.sub(" ", raw)
    y = _YEAR.search(no_ids)
    year = parsed.year if parsed is not None and parsed.year and str(parsed.year) in no_ids else None
    if year is None and y:
        year = int(y.group(1))
    return Reference(
        index=i,
        raw=raw,
        label=str(i + 1),
        authors=list(parsed.authors) if parsed is not None else [],
        year=year,
        title=parsed.title if parsed is not None and _plausible_title(parsed.title) else None,
        arxiv_id=arxiv_id,
        venue=parsed.venue if parsed is not None else None,
        doi=parsed.doi if parsed is not None else None,
    )


def unarxive_to_paper(d: dict[str, Any], *, path: str = "") -> MirrorRecord:
    """One unarXive line → MirrorRecord whose `.paper` is the pre-parsed Paper."""
    md = d.get("metadata")
    if not isinstance(md, dict):
        raise RecordParseError("unarXive line without a metadata block", source=path)
    rec = kaggle_to_record(md, path=path, fmt="unarxive")
    bib = d.get("bib_entries") or {}
    ref_order = list(bib.keys())
    cite_index = {k: i for i, k in enumerate(ref_order)}
    references = [_reference(i, bib[k] if isinstance(bib[k], dict) else {}) for i, k in enumerate(ref_order)]
    ref_entries = d.get("ref_entries") or {}
    sections: list[Section] = []
    citations: list[Citation] = []
    texts: list[list[str]] = []
    current: tuple[str, str, str] | None = None
    numbered: dict[str, int] = {}  # full printed number -> index of its section
    stack: list[tuple[int, str, str]] = []  # open sections: (level, full number, local number)
    front_matter = 0
    lost = 0
    for para in d.get("body_text") or []:
        if not isinstance(para, dict):
            continue
        heading = " ".join(_MARKER.sub("", str(para.get("section") or "")).split())
        number = str(para.get("sec_number") or "").strip()
        number = "" if number in ("-1", "None") else number
        sec_type = str(para.get("sec_type") or "")
        if not heading and not number:
            if not sections:
                # unheaded paragraphs before the first heading: preamble, title page, author blocks, an abstract
                # copy — front matter, never body
                front_matter += 1
                continue
            key = current  # a stray unheaded paragraph continues the section it follows
        else:
            key = (heading, number, sec_type)
        if key != current:
            current = key
            level = _LEVELS.get(sec_type, 4 if heading else 1)
            para_number = re.match(r"^(\d+(?:\.[1-9]\d*)*)\.0(?:\.|$)", number)
            if para_number:  # "2.0.0.1": a numbered paragraph inside section 2, not a section path
                parent_path = para_number.group(1)
                number, level = f"{parent_path}.0", parent_path.count(".") + 2
            level = min(level, stack[-1][0] + 1 if stack else 1)  # no level skipped
            full, level, added = _place(number, level, stack, numbered, sections, texts)
            if para_number:
                full = ""
            lost += added
            role = heading_role(heading) if heading else None
            sections.append(Section(heading=heading, number=full or None, level=level, role=role))
            texts.append([])
            if full:
                numbered.setdefault(full, len(sections) - 1)
            stack.append((level, full, number.rsplit(".", 1)[-1] if number else ""))
        text, cites = _render(str(para.get("text") or "").strip("\n"), cite_index, ref_entries, len(sections) - 1)
        offset = sum(len(t) + 2 for t in texts[-1])
        for c in cites:
            c.start += offset
            c.end += offset
        texts[-1].append(text)
        citations.extend(cites)
    for s, parts in zip(sections, texts, strict=True):
        s.text = "\n\n".join(parts)
    lost += _fill_number_gaps(sections, citations)
    abstract = (d.get("abstract") or {}).get("text") if isinstance(d.get("abstract"), dict) else None
    paper = Paper(
        paper_id=f"unarxive:{rec.meta.arxiv_id}",
        source="unarxive",
        arxiv_id=rec.meta.arxiv_id,
        version=rec.meta.version,
        title=rec.meta.title,
        abstract=" ".join(str(abstract or rec.meta.abstract).split()),
        sections=sections,
        references=references,
        citations=citations,
        parser_version=PARSER_VERSION,
        warnings=[f"{front_matter} unheaded front-matter paragraphs left out of the body"] if front_matter else [],
    )
    if lost:
        paper.warnings.append(f"{lost} section headings without paragraphs restored as placeholders")
    inherit_roles(paper.sections)
    rec.paper = assign_roles(paper)[0]
    return rec


def read_unarxive_lines(lines: Iterator[str], *, path: str = "") -> Iterator[MirrorRecord | RecordParseError]:
    return read_json_lines(lines, unarxive_to_paper, path=path, what="unarXive paper")
