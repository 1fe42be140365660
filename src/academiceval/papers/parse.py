"""`parse_pdf(path) -> Paper`: the one entry point from a PDF file to a structured paper.

Order of work: check the bytes (empty, HTML, truncated), open with PyMuPDF (corrupt, encrypted, page cap,
text layer), lay the pages out into reading-ordered lines (layout.py), find title/abstract/headings
(structure.py), cut the sections, split and parse the references (references.py) and find in-text citations
(citations.py). Every unusable input raises a typed `PaperError` subclass.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pymupdf

from academiceval.errors import AcademicEvalError
from academiceval.papers.citations import find_citations
from academiceval.papers.errors import (
    CorruptPdfError,
    EmptyFileError,
    EncryptedPdfError,
    HtmlNotPdfError,
    NoSectionsError,
    NotAPdfError,
    NoTextLayerError,
    TooManyPagesError,
    TruncatedPdfError,
)
from academiceval.papers.frontmatter import find_abstract, find_title
from academiceval.papers.layout import extract_layout
from academiceval.papers.references import parse_reference, reference_style, split_entries
from academiceval.papers.roles import inherit_roles, role_of
from academiceval.papers.structure import find_headings, text_of
from academiceval.store.hashing import sha256_file
from academiceval.store.paper_models import Citation, Paper, Section, SectionRole

PARSER_VERSION = "pymupdf-heuristic-5"  # 2: journal front matter, bare numbered references; 3: superscript citations;
# 4: reference fields by papers.refstring (venue, DOI; titles without venue/URL debris);
# 5: front matter on unseen arXiv layouts (name lines, wrapped titles, authors under titles)
DEFAULT_MAX_PAGES = 400  # anything longer is a thesis/book/proceedings volume, not a paper

_ARXIV_STAMP = re.compile(r"arXiv:\s*(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v(\d+))?")
_ARXIV_FILENAME = re.compile(r"^(\d{4}\.\d{4,5})(?:v(\d+))?(?=$|[^\d])")
# old-style ids saved with the slash replaced: "astro-ph_0601001v2.pdf" → astro-ph/0601001
_ARXIV_OLD_FILENAME = re.compile(r"^([a-z\-]+(?:\.[A-Z]{2})?)[_/](\d{7})(?:v(\d+))?(?=$|[^\d])")

pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)


def _check_bytes(path: Path) -> None:
    size = path.stat().st_size
    src = str(path)
    if size == 0:
        raise EmptyFileError("the file is empty (0 bytes)", source=src)
    with open(path, "rb") as f:
        head = f.read(1024)
        f.seek(max(0, size - 2048))
        tail = f.read()
    if b"%PDF-" not in head:
        low = head.lstrip().lower()
        if low.startswith((b"<!doctype html", b"<html", b"<?xml")) or b"<html" in low or b"<head" in low:
            raise HtmlNotPdfError("the file is an HTML page, not a PDF", source=src)
        raise NotAPdfError("the file has no PDF header (%PDF-)", source=src)
    if b"%%EOF" not in tail:
        # MuPDF may still repair it; the caller decides after opening
        raise _MaybeTruncated()


class _MaybeTruncated(Exception):
    pass


def _open(path: Path) -> pymupdf.Document:
    src = str(path)
    truncated = False
    try:
        _check_bytes(path)
    except _MaybeTruncated:
        truncated = True
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:
        if truncated:
            raise TruncatedPdfError(
                "the PDF is cut off before its end marker and cannot be opened", source=src
            ) from exc
        raise CorruptPdfError(f"PyMuPDF cannot open the PDF ({exc})", source=src) from exc
    if doc.needs_pass:
        doc.close()
        raise EncryptedPdfError("the PDF is encrypted and needs a password", source=src)
    if doc.page_count == 0 or (truncated and doc.is_repaired):
        doc.close()
        if truncated:
            raise TruncatedPdfError("the PDF is cut off before its end marker (no %EOF)", source=src)
        raise CorruptPdfError("the PDF has no readable pages", source=src)
    return doc


def _arxiv_from(texts: list[str], filename: str) -> tuple[str | None, int | None]:
    for t in texts:
        m = _ARXIV_STAMP.search(t)
        if m:
            return m.group(1), int(m.group(2)) if m.group(2) else None
    m = _ARXIV_FILENAME.match(filename)
    if m:
        return m.group(1), int(m.group(2)) if m.group(2) else None
    m = _ARXIV_OLD_FILENAME.match(filename)
    if m:
        return f"{m.group(1)}/{m.group(2)}", int(m.group(3)) if m.group(3) else None
    return None, None


def parse_pdf(
    path: str | os.PathLike[str], *, max_pages: int = DEFAULT_MAX_PAGES, paper_id: str | None = None
) -> Paper:
    """Parse one PDF into a `Paper`. Raises a `PaperError` subclass for unusable input."""
    p = Path(path)
    src = str(p)
    doc = _open(p)
    try:
        if doc.page_count > max_pages:
            raise TooManyPagesError(
                f"the document has {doc.page_count} pages, more than the cap of {max_pages}", source=src
            )
        try:
            layout = extract_layout(doc)
        except Exception as exc:  # MuPDF can fail mid-document on damaged content streams
            raise CorruptPdfError(f"text extraction failed ({exc})", source=src) from exc
        chars = sum(len(ln.text) for ln in layout.lines)
        if chars < 200 * min(layout.page_count, 3) * 0.5 or chars < 30 * layout.page_count:
            has_images = any(doc[i].get_images() for i in range(min(3, doc.page_count)))
            what = "only images" if has_images else "almost no text"
            raise NoTextLayerError(f"the PDF has {what} ({chars} characters on {layout.page_count} pages)", source=src)
        return _build(layout, p, paper_id or sha256_file(p))
    finally:
        doc.close()


def _build(layout, path: Path, paper_id: str) -> Paper:
    lines = layout.lines
    warnings: list[str] = []
    arxiv_id, version = _arxiv_from([*layout.vertical_text, layout.first_page_text[:3000]], path.name)
    title, title_end = find_title(layout)
    headings = find_headings(layout)
    headings = [h for h in headings if h.line > title_end]
    if not headings:
        raise NoSectionsError(
            f"no section headings (numbered, bold/large, or Introduction/References) in {layout.page_count} pages",
            source=str(path),
        )
    abstract = find_abstract(layout, title_end, headings[0].line)
    sections: list[Section] = []
    bodies: dict[int, list] = {}  # id(section) -> its body lines (for superscript citations)
    ref_lines = []
    ref_section = -1
    for k, h in enumerate(headings):
        end = headings[k + 1].line if k + 1 < len(headings) else len(lines)
        body = lines[max(h.line, h.last) + 1 : end]
        role = role_of(h.text)
        if h.kind == "letter" and (ref_section >= 0 or h.level == 1) and role is None:
            role = SectionRole.appendix if ref_section >= 0 or h.text.lower().startswith("appendix") else None
        sec = Section(heading=h.text, number=h.number, level=h.level, role=role, text="")
        if role == SectionRole.references and ref_section < 0:
            ref_section = len(sections)
            ref_lines = list(body)
        else:
            sec.text = text_of(body)
            bodies[id(sec)] = body
        sections.append(sec)
    if ref_section < 0:
        # letters and short papers often end with a labelled list and no "References" heading; it starts after
        # the conclusion (an Acknowledgements heading may still follow it)
        concl = [k for k, sec in enumerate(sections) if sec.role == SectionRole.conclusion]
        h0 = headings[concl[-1] if concl else len(headings) - 1]
        start = _unheaded_references(lines, max(h0.line, h0.last) + 1)
        if start is not None:
            hk = max(k for k, h in enumerate(headings) if h.line < start)
            h = headings[hk]
            end = headings[hk + 1].line if hk + 1 < len(headings) else len(lines)
            bodies[id(sections[hk])] = lines[max(h.line, h.last) + 1 : start]
            sections[hk].text = text_of(bodies[id(sections[hk])])
            ref_lines = lines[start:end]
            ref_section = hk + 1
            sections.insert(ref_section, Section(heading="References", level=1, role=SectionRole.references))
            warnings.append("reference list found without a References heading")
    _inherit_roles(sections, ref_section)
    refs = [parse_reference(i, label, raw) for i, (label, raw) in enumerate(split_entries(ref_lines))]
    if ref_section >= 0:
        sections[ref_section].text = "\n".join(r.raw for r in refs)
    else:
        warnings.append("no References section found")
    if not any(s.role == SectionRole.introduction for s in sections):
        warnings.append("no Introduction section found")
    if not abstract:
        warnings.append("no abstract found")
    style = reference_style(refs)
    citations = find_citations(sections, refs, style)
    if style == "numeric":
        citations = _superscript_citations(sections, bodies, refs, citations)
    if layout.footnotes:
        warnings.append(f"{len(layout.footnotes)} footnote blocks left out of the section text")
    return Paper(
        paper_id=paper_id,
        source="pdf",
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=abstract,
        sections=sections,
        references=refs,
        citations=citations,
        pages=layout.page_count,
        parser_version=PARSER_VERSION,
        warnings=warnings,
    )


def _superscript_citations(
    sections: list[Section],
    bodies: dict[int, list],
    refs: list,
    found: list[Citation],
) -> list[Citation]:
    """AIP/RSC/APS papers cite with raised numbers ("flows.1,3"), which the layout keeps only in `Line.sup_text`.
    When those find more numbered citations than the bracket markers did, the sections' text takes the raised
    numbers as "[1,3]" (so every citation's offsets point into the stored text) and those citations are used.
    Papers that cite with brackets keep their text unchanged."""
    if not any(ln.sup_text for body in bodies.values() for ln in body):
        return found
    texts = {
        k: text_of([replace(ln, text=ln.sup_text) if ln.sup_text else ln for ln in bodies[id(sec)]])
        for k, sec in enumerate(sections)
        if id(sec) in bodies
    }
    trial = [sec.model_copy(update={"text": texts.get(k, sec.text)}) for k, sec in enumerate(sections)]
    sup = find_citations(trial, refs, "numeric")
    resolved = sum(1 for c in sup if c.reference_indices)
    if resolved < 3 or resolved <= 2 * sum(1 for c in found if c.reference_indices):
        return found
    for k, text in texts.items():
        sections[k].text = text
    return sup


# roles an appendix section keeps: a Related Work moved to the appendix is still the paper's related work
_KEEP_IN_APPENDIX = (SectionRole.acknowledgements, SectionRole.references, SectionRole.related_work)


_FIRST_LABEL = re.compile(r"^\[1\]\s")
_NEXT_LABEL = re.compile(r"^\[[23]\]\s")
# bare numbers: "1 D. C. Johnston, Adv. Phys. 59, 803 (2010)." (APS/RSC styles without a heading)
_BARE = re.compile(r"^(\d{1,3})\s+[A-Z\u00c0-\u024f]")
_YEARISH = re.compile(r"\b(?:19|20)\d{2}\b")


def _unheaded_references(lines: list, begin: int) -> int | None:
    """Index of a "[1] ..." line followed closely by "[2]"/"[3]" entries, or of a bare "1 Name ..." line
    followed by "2 ..." and "3 ..." entries that carry years, searched after `begin`."""
    for k in range(begin, len(lines)):
        text = lines[k].text
        if _FIRST_LABEL.match(text) and sum(1 for ln in lines[k + 1 : k + 40] if _NEXT_LABEL.match(ln.text)) >= 2:
            return k
        m = _BARE.match(text)
        if m and m.group(1) == "1" and _bare_sequence(lines, k):
            return k
    return None


def _bare_sequence(lines: list, k: int) -> bool:
    """Labels 1, 2, 3 start lines in order within a few lines, in one type size, and the entries have years."""
    want, size, dated = 2, lines[k].size, 0
    window = lines[k : k + 30]
    for j, ln in enumerate(window):
        entry = ln.text + " " + (window[j + 1].text if j + 1 < len(window) else "")
        m = _BARE.match(ln.text)
        if m and int(m.group(1)) == want - 1 and abs(ln.size - size) < 0.6:
            dated += bool(_YEARISH.search(entry))
            want += 1
            if want > 4:
                return dated >= 2
    return False


def _inherit_roles(sections: list[Section], ref_section: int) -> None:
    """Subsections without a role take their parent's; unlabelled sections after the references are
    appendix material."""
    stack: list[Section] = []
    in_appendix = False
    for i, s in enumerate(sections):
        while stack and stack[-1].level >= s.level:
            stack.pop()
        if (s.role == SectionRole.appendix and s.level == 1) or (0 <= ref_section < i and s.level == 1):
            in_appendix = in_appendix or s.role not in (SectionRole.acknowledgements, SectionRole.references)
        if in_appendix and s.role not in (
            SectionRole.acknowledgements,
            SectionRole.references,
            SectionRole.related_work,
        ):
            s.role = SectionRole.appendix  # "B Experiment details" in the appendix is appendix material
        elif s.role is None and stack and stack[-1].role is not None:
            s.role = stack[-1].role
        elif s.role is None and (in_appendix or (0 <= ref_section < i)):
            s.role = SectionRole.appendix
        stack.append(s)
    inherit_roles(sections)  # a subsection's own heading does not override its parent's role (issue 16)


# (path, sha256, the paper or None, the error record or None): what an ingest worker sends back
Job = tuple[str, str, Paper | None, dict[str, str | None] | None]


def parse_job(path: str, sha: str, max_pages: int) -> Job:
    """One file's parse as the ingest executors run it (a local worker process, a Ray task): never raises,
    errors travel back as records."""
    try:
        return path, sha, parse_pdf(path, max_pages=max_pages, paper_id=sha), None
    except AcademicEvalError as exc:
        return path, sha, None, exc.as_record()
    except Exception as exc:  # a parser bug must not take the batch down; record it like any other failure
        return path, sha, None, {"code": "parser_error", "message": f"{type(exc).__name__}: {exc}", "hint": None}
