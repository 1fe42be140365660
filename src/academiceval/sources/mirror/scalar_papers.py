"""SCALAR paper objects → the store's own schema (`PaperMeta` + pre-parsed `Paper`), for the question paper and
for every cited paper the object carries with its text.

A SCALAR paper object (`paper_obj_anno/<arxiv id>.json` in LibrAIResearch/scalar) holds one ICLR paper as
crawled from ar5iv: `sections` keyed "N Heading" with `content` and inline `citations` (`start_pos`/`end_pos`
into that content, `text`, `paper_id` = the bib id such as "bib.bib12", `single_citation`, `citation_type`), and
`references.data` keyed by bib id with the cited paper's arXiv id, title, authors, abstract and its own
`sections`. Only references SCALAR could link to arXiv are in `references.data`; a citation of any other bib id
still becomes a `Reference` (raw text = the printed marker, no id) so that every span keeps its reference.

Dates: the object has none. The question paper's v1 date is the month its id encodes, with precision "month"
(`stamped.id_month`); indexing SCALAR's metadata file in the same mirror replaces it with the exact day (records
merge on the most precise v1 date). Cited papers get the same month, recorded as one note per file.

A cited paper's record is a *reference entry* (`PaperMeta.source = "scalar-ref"`, `records.REFERENCE_SOURCE`):
its title is how the citing paper's bibliography printed it ("Attention is all you need, 2023", LLaMA's
"Open and efficient foundation language models"), so it is never the paper's own metadata: any record of the
paper itself (arXiv metadata, its PDF's stamp) replaces it whole (`records.standing`), and it only stands for
papers known from nothing else. Its text (sections, abstract) is kept as that paper's pre-parsed text.

SCALAR's own annotations (`citation_type`, `single_citation`) are kept in `Citation.source_labels` so ours can
be compared with them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from academiceval.papers.bib_markdown import markdown_bibliography
from academiceval.papers.bibliography import BibEntry, clean_title, find_doi
from academiceval.papers.clean import clean_markup
from academiceval.papers.debris.edits import OffsetMap
from academiceval.sources.errors import InvalidArxivIdError, RecordParseError
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.records import REFERENCE_SOURCE, MirrorRecord
from academiceval.sources.mirror.stamped import ApproximateDateNote, id_month
from academiceval.sources.mirror.unarxive import heading_role
from academiceval.sources.names import make_author
from academiceval.store.paper_models import Citation, Paper, PaperMeta, Reference, Section

# 2: the markdown bibliography read into fields, titles cleaned; 3: also ar5iv markup cleaned at reading (clean_markup)
PARSER_VERSION = "scalar-paper-object/3"
QUESTION_SOURCE = "scalar"  # the question paper's records (same source name as SCALAR's metadata file)
CITED_SOURCE = "scalar-ref"  # papers present only as the cited text inside another paper's object
META_SOURCE = "scalar_paper"  # PaperMeta.source of the question paper (SCALAR's metadata file wins ties)
APPROX_WARNING = "v1 date known to the month of the arXiv id only (no date in the SCALAR object)"
_HEADING = re.compile(r"^\s*(?P<num>(?:\d+|[A-Z])(?:\.\d+)*)\.?\s+(?P<head>.+?)\s*\\?\s*$")
_BIB_NUM = re.compile(r"(\d+)$")


def is_scalar_paper_object(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("sections"), dict)
        and isinstance(data.get("references"), dict)
        and "paper_id" in data
    )


def split_heading(key: str) -> tuple[str | None, str]:
    """ "3 The MultiTP Dataset" → ("3", "The MultiTP Dataset"); trailing ar5iv backslashes dropped."""
    m = _HEADING.match(key)
    if m:
        return m.group("num"), m.group("head").rstrip("\\ ").strip()
    return None, key.rstrip("\\ ").strip()


def _sections(raw: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    out = []
    for key, sec in raw.items():
        if isinstance(sec, dict):
            out.append((str(key), str(sec.get("content") or ""), list(sec.get("citations") or [])))
    return out


def _bib_order(bib_id: str) -> tuple[int, str]:
    m = _BIB_NUM.search(bib_id)
    return (int(m.group(1)) if m else 1_000_000, bib_id)


def _year(value: object) -> int | None:
    m = re.search(r"\b(1[89]\d\d|20\d\d)\b", str(value or ""))
    return int(m.group(1)) if m else None


def _versionless(raw: object) -> str | None:
    try:
        return parse_arxiv_id(str(raw or "").strip())[0] if raw else None
    except InvalidArxivIdError:
        return None


def _doi(value: object) -> str | None:
    return find_doi(str(value or "")) if value and str(value) != "None" else None


def _fold(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().casefold()


def markdown_entries(data: dict[str, Any], refs_raw: dict[str, Any]) -> tuple[dict[str, BibEntry], str | None]:
    """bib id → entry of the object's markdown bibliography (item N is `bib.bibN` / `bib.bibxN`).

    The position rule is checked against SCALAR's own markers (`references.data[…].citation`): when more than one
    in ten of them disagree with the item's marker (accents folded), the markdown is not used for this object and
    the second value says why.
    """
    entries = markdown_bibliography(str(data.get("markdown_content") or ""))
    if not entries:
        return {}, None
    checked = wrong = 0
    for bib, r in refs_raw.items():
        n = _bib_order(bib)[0] - 1
        marker = str(r.get("citation") or "") if isinstance(r, dict) else ""
        if not marker or not 0 <= n < len(entries):
            continue
        checked += 1
        lead = re.findall(r"\w+", _fold(marker))[:1]
        wrong += lead != re.findall(r"\w+", _fold(entries[n].key or ""))[:1]
    if checked and wrong > 0.1 * checked:
        return {}, f"markdown bibliography not used: {wrong} of {checked} markers disagree with SCALAR's bib ids"
    out = {}
    for bib in {*refs_raw, *(f"bib.bib{i + 1}" for i in range(len(entries)))}:
        n = _bib_order(bib)[0] - 1
        if 0 <= n < len(entries):
            out[bib] = entries[n]
    return out, None


def _plain_sections(raw: dict[str, Any]) -> list[Section]:
    out: list[Section] = []
    for key, content, _ in _sections(raw):
        number, heading = split_heading(key)
        text, _changes = clean_markup(content)
        out.append(Section(heading=heading, number=number, level=1, role=heading_role(heading), text=text))
    return out


def _at(d: object) -> datetime:
    return datetime.combine(d, datetime.min.time(), tzinfo=UTC)


def paper_object_to_records(
    data: dict[str, Any], *, path: str = ""
) -> Iterator[MirrorRecord | RecordParseError | ApproximateDateNote]:
    """The question paper first, then each cited paper that has text; problems are yielded, never raised."""
    try:
        arxiv_id, version = parse_arxiv_id(str(data.get("paper_id") or ""))
    except InvalidArxivIdError as e:
        yield RecordParseError(f"SCALAR paper object without an arXiv id: {e.message}", source=path)
        return
    published = id_month(arxiv_id)
    if published is None:
        yield RecordParseError(f"cannot date SCALAR paper {arxiv_id}", source=path)
        return
    refs_raw = (data.get("references") or {}).get("data") or {}
    refs_raw = refs_raw if isinstance(refs_raw, dict) else {}
    sections_raw = _sections(data.get("sections") or {})
    cited_ids = {str(c.get("paper_id")) for _, _, cs in sections_raw for c in cs if c.get("paper_id")}
    order = sorted(set(refs_raw) | cited_ids, key=_bib_order)
    index = {bib: i for i, bib in enumerate(order)}
    references: list[Reference] = []
    marker_of: dict[str, str] = {}
    for _, _, cs in sections_raw:
        for c in cs:
            marker_of.setdefault(str(c.get("paper_id")), str(c.get("text") or ""))
    bibliography, misaligned = markdown_entries(data, refs_raw)
    if misaligned:
        yield RecordParseError(misaligned, source=path)
    for bib in order:
        r = refs_raw.get(bib) if isinstance(refs_raw.get(bib), dict) else None
        entry = bibliography.get(bib)
        if r is None:
            if entry is not None:  # a work SCALAR did not link to arXiv: the markdown bibliography has its fields
                references.append(entry.to_reference(index[bib], bib))
            else:
                references.append(Reference(index=index[bib], raw=marker_of.get(bib, bib), label=bib))
            continue
        title = clean_title(str(r.get("title") or "")) or (entry.title if entry else None)
        authors = [a.strip() for a in re.split(r",\s*(?:and\s+)?|\s+and\s+", str(r.get("authors") or "")) if a.strip()]
        raw = " ".join(x for x in (str(r.get("citation") or ""), str(r.get("authors") or ""), title or "") if x)
        references.append(
            Reference(
                index=index[bib],
                raw=entry.raw if entry is not None else " ".join(raw.split()),
                label=bib,
                authors=[a.rstrip(".") for a in authors] or (list(entry.authors) if entry else []),
                year=_year(r.get("year")) or (entry.year if entry else None),
                title=title,
                arxiv_id=_versionless(r.get("arxiv_id")) or (entry.arxiv_id if entry else None),
                venue=entry.venue if entry else None,
                doi=_doi(r.get("doi")) or (entry.doi if entry else None),
            )
        )
    sections: list[Section] = []
    citations: list[Citation] = []
    bad_spans = in_markup = 0
    for si, (key, content, cs) in enumerate(sections_raw):
        number, heading = split_heading(key)
        # ar5iv markup → text when the object is read (papers.clean.clean_markup): the store holds one clean text
        # for every consumer (writing tasks, cloze, retrieval), and the citation spans move with it
        offsets = OffsetMap()
        clean, _changes = clean_markup(content, offsets)
        sections.append(Section(heading=heading, number=number, level=1, role=heading_role(heading), text=clean))
        for c in cs:
            start, end, text = int(c.get("start_pos", -1)), int(c.get("end_pos", -1)), str(c.get("text") or "")
            if not (0 <= start < end <= len(content)) or content[start:end] != text:
                bad_spans += 1
                continue
            moved = offsets.span(start, end)
            if moved is None:
                in_markup += 1  # inside a removed table row, trail or listing
                continue
            start, end = moved
            text = clean[start:end]
            labels = {"scalar_single_citation": str(bool(c.get("single_citation"))).lower()}
            if c.get("citation_type"):
                labels["scalar_citation_type"] = str(c["citation_type"])
            citations.append(
                Citation(
                    section_index=si,
                    start=start,
                    end=end,
                    text=text,
                    style="numeric" if text.lstrip().startswith("[") else "author_year",
                    reference_indices=[index[str(c.get("paper_id"))]],
                    grouped=not bool(c.get("single_citation", True)),
                    source_labels=labels,
                )
            )
    if bad_spans:
        yield RecordParseError(f"{bad_spans} citation spans do not match their section text", source=path)
    warnings = [APPROX_WARNING]
    if in_markup:
        warnings.append(f"{in_markup} citation spans inside removed ar5iv markup (table rows, trails) dropped")
    title = " ".join(str(data.get("title") or "").split())
    abstract = " ".join(str(data.get("abstract") or "").split())
    meta = PaperMeta(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=abstract,
        published=published,
        date_precision="month",
        source=META_SOURCE,
    )
    paper = Paper(
        paper_id=f"{QUESTION_SOURCE}:{arxiv_id}",
        source=QUESTION_SOURCE,
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=abstract,
        sections=sections,
        references=references,
        citations=citations,
        parser_version=PARSER_VERSION,
        warnings=warnings,
    )
    yield MirrorRecord(meta, _at(published), path=path, fmt="scalar_paper", paper=paper)
    approximated = 0
    for bib in order:
        r = refs_raw.get(bib)
        if not isinstance(r, dict):
            continue
        cited = cited_paper(r)
        if cited is None:
            continue
        cmeta, cpaper = cited
        approximated += 1
        yield MirrorRecord(cmeta, _at(cmeta.published), path=f"{path}#{bib}", fmt="scalar_paper", paper=cpaper)
    yield ApproximateDateNote(
        f"v1 dates of {arxiv_id} and its {approximated} cited papers known to the month of their arXiv ids only "
        "(SCALAR paper objects carry no dates; index SCALAR's metadata file for exact ones)",
        source=path,
    )


def cited_paper(r: dict[str, Any]) -> tuple[PaperMeta, Paper] | None:
    """A cited paper with text (sections or an abstract) and an arXiv id → its meta and pre-parsed paper."""
    aid = _versionless(r.get("arxiv_id"))
    sections_raw = r.get("sections") or {}
    abstract = " ".join(str(r.get("abstract") or "").split())
    if aid is None or not (sections_raw or abstract):
        return None
    published = id_month(aid)
    if published is None:
        return None
    title = clean_title(str(r.get("title") or "")) or ""  # SCALAR's titles keep the style's ", 2024" / month
    authors = [a.strip() for a in re.split(r",\s*(?:and\s+)?|\s+and\s+", str(r.get("authors") or "")) if a.strip()]
    meta = PaperMeta(
        arxiv_id=aid,
        title=title or aid,
        abstract=abstract,
        authors=[make_author(a.rstrip(".")) for a in authors],
        published=published,
        date_precision="month",
        source=REFERENCE_SOURCE,  # a reference entry: never the paper's own metadata (records.standing)
    )
    paper = Paper(
        paper_id=f"{CITED_SOURCE}:{aid}",
        source=CITED_SOURCE,
        arxiv_id=aid,
        title=title,
        abstract=abstract,
        sections=_plain_sections(sections_raw) if isinstance(sections_raw, dict) else [],
        parser_version=PARSER_VERSION,
        warnings=[APPROX_WARNING],
    )
    return meta, paper


def read_scalar_paper_object(data: Any, *, path: str = "") -> Iterator[MirrorRecord | RecordParseError]:
    """Reader for `scan.read_file` (records and errors only; the date approximation is stated in each
    `Paper.warnings` instead of a note, since the mirror index keeps notes for PDF stamps only)."""
    if not is_scalar_paper_object(data):
        yield RecordParseError("not a SCALAR paper object (needs paper_id, sections, references)", source=path)
        return
    for item in paper_object_to_records(data, path=path):
        if not isinstance(item, ApproximateDateNote):
            yield item
