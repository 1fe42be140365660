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

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from academiceval.sources.dates import from_parts, parse_iso_partial
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.models import Author, DatePrecision, PaperMeta
from academiceval.sources.names import display_name, make_author

logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)

_ARXIV_IN = re.compile(r"(?:arxiv[:.\s/]*|abs/)(\d{4}\.\d{4,5}(?:v\d+)?|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})", re.I)
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>{}]+", re.I)
_KEY_IN_RAW = re.compile(r"@\s*\w+\s*[{(]\s*([^,\s]+)\s*,")
_MARKS = re.compile(r"\{\s*[*∗†]\s*\}|[*∗†]")


@dataclass
class PubIssue:
    """A problem in a publication list or with one of its PDFs; the rest of the list goes on."""

    file: str
    key: str | None
    code: str  # malformed_entry, duplicate_key, missing_field, unsafe_file, file_missing, title_mismatch,
    #            unlisted_pdf, pdf_error, unreadable_list
    message: str
    line: int | None = None


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
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock, ParsingFailedBlock

    p = Path(path)
    src = str(p)
    text = p.read_text(encoding="utf-8", errors="replace")
    lib = bibtexparser.parse_string(text)
    issues: list[PubIssue] = []
    for b in lib.failed_blocks:
        line = (b.start_line or 0) + 1
        if isinstance(b, DuplicateBlockKeyBlock):
            issues.append(
                PubIssue(src, b.key, "duplicate_key", f"entry key {b.key!r} used again; the first entry is kept", line)
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
                )
            )
    entries: list[PubEntry] = []
    for e in lib.entries:
        fields = {f.key.lower(): str(f.value) for f in e.fields}
        line = (e.start_line or 0) + 1
        entry, problems = _entry(e.key, e.entry_type.lower(), fields, src, line)
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
        return None, [PubIssue(src, key, "missing_field", "no title: entry skipped", line)]
    when = parse_iso_partial(fields["date"]) if fields.get("date") else None
    if when is None or (when[1] == "year" and fields.get("month")):
        when = (
            from_parts(fields.get("year") or (fields.get("date") or "")[:4], fields.get("month"), fields.get("day"))
            or when
        )
    if when is None:
        return None, [PubIssue(src, key, "missing_field", "no usable year/date: entry skipped", line)]
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
    p = Path(path)
    src = str(p)
    try:
        items = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return PubList(p, [], [PubIssue(src, None, "unreadable_list", f"not valid JSON ({exc})")])
    if isinstance(items, dict):
        items = items.get("items", [items])
    entries: list[PubEntry] = []
    issues: list[PubIssue] = []
    seen: set[str] = set()
    for n, it in enumerate(items if isinstance(items, list) else []):
        if not isinstance(it, dict):
            issues.append(PubIssue(src, None, "malformed_entry", f"item {n} is not an object"))
            continue
        key = str(it.get("id") or it.get("citation-key") or f"item{n}")
        if key in seen:
            issues.append(PubIssue(src, key, "duplicate_key", f"id {key!r} used again; the first item is kept"))
            continue
        seen.add(key)
        title = latex_text(str(it.get("title") or ""))
        if not title:
            issues.append(PubIssue(src, key, "missing_field", "no title: item skipped"))
            continue
        when = _csl_date(it.get("issued"))
        if when is None:
            issues.append(PubIssue(src, key, "missing_field", "no usable `issued` date: item skipped"))
            continue
        authors = []
        for a in it.get("author") or []:
            if not isinstance(a, dict):
                continue
            name = a.get("literal") or " ".join(
                x
                for x in (a.get("given"), a.get("non-dropping-particle") or a.get("dropping-particle"), a.get("family"))
                if x
            )
            if name:
                authors.append(make_author(str(name)))
        if not authors:
            issues.append(PubIssue(src, key, "missing_field", "no authors: kept without authors"))
        doi = str(it.get("DOI") or "").strip().lower() or None
        fields = {
            "doi": doi or "",
            "note": str(it.get("note") or ""),
            "url": str(it.get("URL") or ""),
            "arxiv": str(it.get("arxiv") or ""),
        }
        files = it.get("file") or it.get("files") or []
        entries.append(
            PubEntry(
                key=key,
                entry_type=str(it.get("type") or "article"),
                title=title,
                authors=authors,
                published=when[0],
                date_precision=when[1],
                source_file=src,
                abstract=latex_text(str(it.get("abstract") or "")),
                venue=str(it.get("container-title") or "") or None,
                doi=doi,
                arxiv_id=_arxiv_of(fields),
                files=split_files(files) if isinstance(files, str) else [str(f) for f in files],
            )
        )
    return PubList(p, entries, issues)


def _csl_date(issued: object):  # type: ignore[no-untyped-def]
    if not isinstance(issued, dict):
        return None
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        y, *rest = parts[0]
        return from_parts(y, rest[0] if rest else None, rest[1] if len(rest) > 1 else None)
    if issued.get("raw"):
        return parse_iso_partial(str(issued["raw"]))
    return None


# ---- discovery -------------------------------------------------------------------------------------------------
def is_csl_json(path: Path) -> bool:
    if path.suffix.lower() != ".json":
        return False
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4000].lstrip()
    except OSError:
        return False
    return head.startswith("[") and '"title"' in head and ('"issued"' in head or '"type"' in head)


def find_lists(root: str | Path) -> list[Path]:
    """Publication lists in a folder (not recursive into PDF folders): *.bib and CSL-JSON files."""
    r = Path(root)
    if r.is_file():
        return [r]
    return sorted(p for p in r.iterdir() if p.is_file() and (p.suffix.lower() == ".bib" or is_csl_json(p)))


def read_list(path: str | Path) -> PubList:
    p = Path(path)
    if p.suffix.lower() == ".bib":
        return read_bibtex(p)
    return read_csl_json(p)
