"""Publication lists: a group's own BibTeX file or CSL-JSON export → `PubEntry` records (metadata only).

BibTeX is read with bibtexparser (v2), which recovers from a malformed entry and goes on with the next one;
each problem becomes a `PubIssue` naming the file, the entry key and the line: malformed entries (unbalanced
braces), duplicate keys (the first entry is kept), missing title or year. Field values are decoded from LaTeX
with pylatexenc (a bare `%` in an abstract is text, not a comment). Authors are split by bibtexparser's name
rules ("Last, First", "{Le Berre}", "van der Berg, A.") and normalised with `sources.names` (display form and
key); the equal-contribution marks some lists carry (`{*}Bryngelson`) are dropped.

Dates keep their precision: `year` alone is a year, `year`+`month` a month, `year`+`month`+`day` (or a full
biblatex `date`) a day; CSL-JSON `issued.date-parts` likewise. `file` fields are kept as written; whether they
name a PDF inside the list's folder is decided by `sources.publist_import`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from academiceval.sources.dates import from_parts, parse_iso_partial
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.names import display_name, make_author
from academiceval.sources.publist_rows import (
    FIX_ROW,
    CslItem,
    PubIssue,
    csl_rows,
    json_items,
    read_list_text,
)
from academiceval.store.paper_models import Author, DatePrecision, PaperMeta

logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)

_ARXIV_IN = re.compile(r"(?:arxiv[:.\s/]*|abs/)(\d{4}\.\d{4,5}(?:v\d+)?|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})", re.I)
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>{}]+", re.I)
_KEY_IN_RAW = re.compile(r"@\s*\w+\s*[{(]\s*([^,\s]+)\s*,")
_MARKS = re.compile(r"\{\s*[*∗†]\s*\}|[*∗†]")


@dataclass
class PubEntry:
    """One publication as the list gives it."""

    key: str
    entry_type: str
    title: str
    authors: list[Author]
    published: date | None
    date_precision: DatePrecision
    source_file: str
    line: int | None = None
    abstract: str = ""
    venue: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    files: list[str] = field(default_factory=list)  # as written in the list

    @property
    def paper_id(self) -> str:
        """The id the paper is stored under: its arXiv id when the list names one, else `pub:<key>`."""
        return self.arxiv_id or f"pub:{self.key}"

    def to_meta(self, *, category: str | None = None) -> PaperMeta:
        if self.published is None:
            raise ValueError(f"entry {self.key} has no date")
        return PaperMeta(
            arxiv_id=self.paper_id,
            title=self.title,
            abstract=self.abstract,
            authors=self.authors,
            primary_category=category,
            categories=[category] if category else [],
            published=self.published,
            date_precision=self.date_precision,
            doi=self.doi,
            journal_ref=self.venue,
            source="publist",
        )


@dataclass
class PubList:
    path: Path
    entries: list[PubEntry]
    issues: list[PubIssue]


# ---- text ------------------------------------------------------------------------------------------------------
def latex_text(value: str) -> str:
    """A BibTeX field value as plain text: LaTeX accents/commands decoded, braces gone, whitespace collapsed."""
    if not value:
        return ""
    if "\\" in value or "$" in value:
        from pylatexenc.latex2text import LatexNodes2Text

        escaped = re.sub(r"(?<!\\)%", r"\\%", value)  # a bare % is text in a bib value, not a LaTeX comment
        try:
            value = LatexNodes2Text(math_mode="text", strict_latex_spaces=False).latex_to_text(escaped)
        except Exception:  # pylatexenc is lenient, but never let one odd value stop a list
            value = display_name(value)
    value = value.replace("{", "").replace("}", "")
    return " ".join(value.replace("--", "–").split())


def _authors(raw: str) -> list[Author]:
    from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

    out: list[Author] = []
    for name in split_multiple_persons_names(_MARKS.sub("", raw)):
        name = name.strip()
        if not name or name.lower() == "others":
            continue
        try:
            p = parse_single_name_into_parts(name, strict=False)
            written = " ".join([*p.first, *p.von, *p.last]) + (", " + " ".join(p.jr) if p.jr else "")
        except Exception:
            written = name
        out.append(make_author(written.strip() or name))
    return out


def _arxiv_of(fields: dict[str, str]) -> str | None:
    cands = [
        fields.get("arxiv", ""),
        fields.get("eprint", "") if "arxiv" in fields.get("archiveprefix", "arxiv").lower() else "",
    ]
    cands += [fields.get("doi", ""), fields.get("note", ""), fields.get("url", ""), fields.get("journal", "")]
    for c in cands:
        m = _ARXIV_IN.search(c) if c else None
        raw = m.group(1) if m else (c.strip() if c and re.fullmatch(r"\s*\d{4}\.\d{4,5}(v\d+)?\s*", c) else None)
        if raw:
            try:
                return parse_arxiv_id(raw)[0]
            except Exception:
                continue
    return None


def split_files(value: str) -> list[str]:
    """`file` field forms: "x.pdf", "a.pdf;b.pdf", JabRef ":papers/x.pdf:PDF", Zotero "files/1/x.pdf"."""
    out: list[str] = []
    for part in re.split(r";(?![^{]*\})", value or ""):
        part = part.strip()
        if not part:
            continue
        if part.count(":") >= 2 and not re.match(r"^[A-Za-z]:[\\/]", part):  # JabRef description:path:type
            bits = part.split(":")
            part = ":".join(bits[1:-1]) if len(bits) >= 3 else part
        part = part.replace("\\:", ":").strip()
        if part:
            out.append(part)
    return out


# ---- BibTeX ----------------------------------------------------------------------------------------------------
def read_bibtex(path: str | Path) -> PubList:
    """Every entry of a BibTeX file; malformed, duplicate, keyless or undated entries are issues (file, line, key,
    what to do) and the rest goes on. The file is read within `publist_rows`' limits (size, encoding, BOM)."""
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock, ParsingFailedBlock

    p = Path(path)
    src = str(p)
    text, issues = read_list_text(p)
    if text is None:
        return PubList(p, [], issues)
    try:
        lib = bibtexparser.parse_string(text)
    except Exception as exc:  # bibtexparser recovers per block; anything else is the file's, not a traceback
        why = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        return PubList(
            p,
            [],
            [
                *issues,
                PubIssue(
                    src,
                    None,
                    "unreadable_list",
                    f"cannot be parsed as BibTeX ({why})",
                    hint="check the file with a BibTeX tool and import again",
                ),
            ],
        )
    for b in lib.failed_blocks:
        line = (b.start_line or 0) + 1
        if isinstance(b, DuplicateBlockKeyBlock):
            issues.append(
                PubIssue(
                    src,
                    b.key,
                    "duplicate_key",
                    f"entry key {b.key!r} used again: this entry is skipped, the first one is kept",
                    line,
                    hint="give one of the two entries another key",
                )
            )
        elif isinstance(b, ParsingFailedBlock):
            m = _KEY_IN_RAW.search(b.raw or "")
            why = type(b.error).__name__ if getattr(b, "error", None) else "syntax error"
            issues.append(
                PubIssue(
                    src,
                    m.group(1) if m else None,
                    "malformed_entry",
                    f"entry cannot be read ({why}: unbalanced braces or quotes?)",
                    line,
                    hint=FIX_ROW,
                )
            )
    entries: list[PubEntry] = []
    for e in lib.entries:
        line = (e.start_line or 0) + 1
        key = str(e.key or "").strip()
        if not key or any(c.isspace() for c in key):
            issues.append(
                PubIssue(
                    src,
                    key or None,
                    "invalid_entry",
                    f"entry key {key!r} is empty or has spaces",
                    line,
                    hint="give the entry a key without spaces",
                )
            )
            continue
        fields = {str(f.key).lower(): str(f.value) for f in e.fields}
        entry, problems = _entry(key, str(e.entry_type).lower(), fields, src, line)
        issues.extend(problems)
        if entry is not None:
            entries.append(entry)
    return PubList(p, entries, issues)


def _entry(
    key: str, etype: str, fields: dict[str, str], src: str, line: int | None
) -> tuple[PubEntry | None, list[PubIssue]]:
    issues: list[PubIssue] = []
    title = latex_text(fields.get("title", ""))
    if not title:
        return None, [
            PubIssue(
                src, key, "missing_field", "no title: entry skipped", line, hint="add a title if this entry is a paper"
            )
        ]
    when = parse_iso_partial(fields["date"]) if fields.get("date") else None
    if when is None or (when[1] == "year" and fields.get("month")):
        when = (
            from_parts(fields.get("year") or (fields.get("date") or "")[:4], fields.get("month"), fields.get("day"))
            or when
        )
    if when is None:
        return None, [
            PubIssue(
                src,
                key,
                "missing_field",
                "no usable year/date: entry skipped",
                line,
                hint="add year = {YYYY} (or date = {YYYY-MM-DD})",
            )
        ]
    authors = _authors(fields.get("author", ""))
    if not authors:
        issues.append(
            PubIssue(src, key, "missing_field", "no authors: kept without authors (not in the co-author graph)", line)
        )
    doi = (m.group(0).rstrip(".,;") if (m := _DOI.search(fields.get("doi", ""))) else None) or None
    venue = next(
        (
            latex_text(fields[f])
            for f in ("journal", "journaltitle", "booktitle", "institution", "publisher")
            if fields.get(f)
        ),
        None,
    )
    entry = PubEntry(
        key=key,
        entry_type=etype,
        title=title,
        authors=authors,
        published=when[0],
        date_precision=when[1],
        source_file=src,
        line=line,
        abstract=latex_text(fields.get("abstract", "")),
        venue=venue,
        doi=doi.lower() if doi else None,
        arxiv_id=_arxiv_of(fields),
        files=split_files(fields.get("file", "")),
    )
    return entry, issues


# ---- CSL-JSON --------------------------------------------------------------------------------------------------
def read_csl_json(path: str | Path) -> PubList:
    """Every item of a CSL-JSON list, each checked as a `publist_rows.CslItem`: a bad item (not an object, a
    field of the wrong type, nested too deep) is one issue with its line and is skipped; the rest goes on."""
    p = Path(path)
    src = str(p)
    text, issues = read_list_text(p)
    if text is None:
        return PubList(p, [], issues)
    raw_items, problems = json_items(text, src)
    issues.extend(problems)
    entries: list[PubEntry] = []
    seen: dict[str, int] = {}
    for raw, item, problem in csl_rows(raw_items, src):
        if item is None:
            issues.append(problem)
            continue
        key = str(item.id if item.id is not None and str(item.id).strip() else item.citation_key or f"item{raw.index}")
        key = key.strip()
        if key in seen:
            issues.append(
                PubIssue(
                    src,
                    key,
                    "duplicate_key",
                    f"id {key!r} used again (first at line {seen[key]}): this item is skipped",
                    raw.line,
                    hint="give one of the two items another id",
                )
            )
            continue
        seen[key] = raw.line
        entry, problems = _csl_entry(item, key, src, raw.line)
        issues.extend(problems)
        if entry is not None:
            entries.append(entry)
    issues.sort(key=lambda i: i.line or 0)  # in the file's order (a syntax error is found before the rows)
    return PubList(p, entries, issues)


def _csl_entry(it: CslItem, key: str, src: str, line: int) -> tuple[PubEntry | None, list[PubIssue]]:
    title = latex_text(it.title or "")
    if not title:
        return None, [PubIssue(src, key, "missing_field", "no title: item skipped", line, hint="add a title")]
    when = it.issued.when() if it.issued else None
    if when is None:
        return None, [
            PubIssue(
                src,
                key,
                "missing_field",
                "no usable `issued` date: item skipped",
                line,
                hint='add "issued": {"date-parts": [[YYYY]]}',
            )
        ]
    authors = [make_author(n) for n in (a.written() for a in it.author) if n]
    issues = [] if authors else [PubIssue(src, key, "missing_field", "no authors: kept without authors", line)]
    doi = (it.DOI or "").strip().lower() or None
    fields = {"doi": doi or "", "note": it.note or "", "url": it.URL or "", "arxiv": it.arxiv or ""}
    files = it.file if it.file is not None else it.files
    entry = PubEntry(
        key=key,
        entry_type=it.type or "article",
        title=title,
        authors=authors,
        published=when[0],
        date_precision=when[1],
        source_file=src,
        line=line,
        abstract=latex_text(it.abstract or ""),
        venue=it.container_title or None,
        doi=doi,
        arxiv_id=_arxiv_of(fields),
        files=split_files(files) if isinstance(files, str) else list(files or []),
    )
    return entry, issues


# ---- discovery -------------------------------------------------------------------------------------------------
def is_csl_json(path: Path) -> bool:
    """A `.json` file beside the list is read as CSL-JSON (what is not is said by the reader, never skipped)."""
    return path.suffix.lower() == ".json"


def find_lists(root: str | Path) -> list[Path]:
    """Publication lists in a folder (not recursive into PDF folders): *.bib and *.json (CSL-JSON) files."""
    r = Path(root)
    if r.is_file():
        return [r]
    return sorted(p for p in r.iterdir() if p.is_file() and (p.suffix.lower() == ".bib" or is_csl_json(p)))


def read_list(path: str | Path) -> PubList:
    p = Path(path)
    if p.suffix.lower() == ".bib":
        return read_bibtex(p)
    return read_csl_json(p)
