"""Metadata records made from PDFs' arXiv stamps, for papers the mirror holds only as a PDF.

Without a record a PDF has no v1 date, so a round cannot place it in a chronological split. The page-1 stamp gives
id, version, primary category and the date of that version; title and abstract come from the PDF parser
(`academiceval.papers.parse_pdf`). Authors stay empty: the parsed `Paper` carries none.

Rules (kept simple on purpose):
- a stamp record is made only for an id with *no* record from any other format (Kaggle, .abs, listing, Atom,
  SCALAR, unarXive); a real record always replaces it, whatever the versions (see `workspace._write`);
- the stamp of v1 dates v1 exactly: `published` = stamp date;
- the stamp of vN (N > 1) dates version N only (`updated` = stamp date). The v1 date is then known to the month
  the id encodes and no better: `published` = the first day of that month with `date_precision = "month"` (an
  id's YYMM is the month whose announcement cycle took the v1 submission: `1706.03762` was submitted in June
  2017 even though the stamp of v7 says 2023). Windows and leakage checks treat it as any day of that month
  (`sources.dates`). An `ApproximateDateNote` (code `approx_v1_date`) goes to table `mirror_error`, so it is
  visible;
- the title is the parser's, except that one set in capitals takes its case from the paper's own text
  (`titles.recase`: "EDUCATIONAL TIMETABLING: …" → "Educational Timetabling: …");
- PDFs not named by id are used when their stamp names a paper (`title.pdf` downloaded from arXiv), but a PDF
  named by id wins for that id.
"""

from __future__ import annotations

import calendar
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from academiceval.errors import AcademicEvalError
from academiceval.sources.dates import format_date
from academiceval.sources.errors import RecordParseError, SourceError
from academiceval.sources.mirror.pdf_stamp import ArxivStamp, read_arxiv_stamp
from academiceval.sources.mirror.records import MirrorRecord
from academiceval.sources.mirror.titles import recase
from academiceval.store.paper_models import DatePrecision, PaperMeta

STAMP_SOURCE = "pdf-stamp"
Describe = Callable[[Path], tuple[str, str]]


class ApproximateDateNote(SourceError):
    """Not an error: a record whose v1 date is known only to the month of its arXiv id (a stamp of version
    N > 1, a SCALAR paper object)."""

    code = "approx_v1_date"


@dataclass
class StampResult:
    records: list[MirrorRecord] = field(default_factory=list)
    pdfs: dict[str, tuple[int | None, Path]] = field(default_factory=dict)  # found by stamp, not by file name
    errors: list[SourceError] = field(default_factory=list)
    notes: list[SourceError] = field(default_factory=list)
    stamps_read: int = 0


_PARSED: dict[tuple[str, int, int], tuple[str, str]] = {}
_PARSED_LOCK = threading.Lock()


def parsed_title_abstract(path: Path) -> tuple[str, str]:
    """(title, abstract) of a PDF from the papers parser, memoised per (file, size, mtime) in this process, so
    `mirror index` and a `MirrorSource` in the same process parse each PDF once. Raises the parser's errors."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _PARSED_LOCK:
        hit = _PARSED.get(key)
    if hit is not None:
        return hit
    from academiceval.papers import parse_pdf  # heavy-ish import, only when a stamp record is needed

    paper = parse_pdf(path)
    text = " ".join([paper.abstract, *(sec.text for sec in paper.sections[:12])])
    got = (recase(" ".join(paper.title.split()), text), " ".join(paper.abstract.split()))
    with _PARSED_LOCK:
        _PARSED[key] = got
    return got


def id_month(arxiv_id: str) -> date | None:
    """First day of the month an arXiv id was assigned in (`2203.00130` → 2022-03-01): with precision "month",
    all an id says about the paper's v1 date; None when the id has no YYMM."""
    end = id_month_end(arxiv_id)
    return end.replace(day=1) if end else None


def id_month_end(arxiv_id: str) -> date | None:
    """Last day of the month an arXiv id was assigned in (`2203.00130` → 2022-03-31, `hep-th/9901001` →
    1999-01-31), i.e. an upper bound of the paper's v1 submission date; None when the id has no YYMM."""
    m = re.match(r"^(?:[a-z][a-z\-]*(?:\.[A-Z]{2})?/)?(\d{2})(\d{2})", arxiv_id)
    if not m:
        return None
    yy, mm = int(m.group(1)), int(m.group(2))
    if not 1 <= mm <= 12:
        return None
    year = 1900 + yy if yy >= 91 else 2000 + yy  # arXiv started in August 1991
    return date(year, mm, calendar.monthrange(year, mm)[1])


def stamp_to_record(stamp: ArxivStamp, path: Path, *, version: int | None, title: str, abstract: str) -> MirrorRecord:
    """A `pdf-stamp` record; for vN (N > 1) `published` is the id's month, with precision "month"."""
    cats = [stamp.primary_category] if stamp.primary_category else []
    v = stamp.version or version
    published: date = stamp.date
    precision: DatePrecision = "day"
    month = id_month(stamp.arxiv_id)
    if (v or 1) > 1 and month is not None and month <= stamp.date:
        published, precision = month, "month"
    at = datetime.combine(published, datetime.min.time(), tzinfo=UTC)
    up = datetime.combine(stamp.date, datetime.min.time(), tzinfo=UTC)
    meta = PaperMeta(
        arxiv_id=stamp.arxiv_id,
        version=v,
        title=title,
        abstract=abstract,
        primary_category=stamp.primary_category,
        categories=cats,
        published=published,
        date_precision=precision,
        updated=stamp.date,
        source=STAMP_SOURCE,
    )
    return MirrorRecord(meta, at, up, path=str(path), fmt=STAMP_SOURCE)


def stamp_records(
    named: dict[str, tuple[int | None, Path]],
    unnamed: Iterable[Path],
    has_record: Callable[[str], bool],
    *,
    describe: Describe = parsed_title_abstract,
) -> StampResult:
    """Records for the PDFs whose paper has no record (`has_record(id)` is False).

    `named`: PDFs named by id (versionless id → (version, path)); `unnamed`: other PDFs, used when stamped.
    Every problem is collected in `errors` (typed, with the file), never raised.
    """
    out = StampResult()
    stamps: dict[Path, ArxivStamp | None] = {}

    def stamp_of(p: Path) -> ArxivStamp | None:
        if p not in stamps:
            out.stamps_read += 1
            try:
                stamps[p] = read_arxiv_stamp(p)
            except SourceError as e:
                out.errors.append(e)
                stamps[p] = None
        return stamps[p]

    for p in unnamed:
        try:
            s = read_arxiv_stamp(p)
        except SourceError:  # an unreadable PDF not named by id: nothing says it is arXiv's; stays skipped
            continue
        out.stamps_read += 1
        stamps[p] = s
        if s is None or s.arxiv_id in named:
            continue
        old = out.pdfs.get(s.arxiv_id)
        if old is None or (s.version or 0) > (old[0] or 0):
            out.pdfs[s.arxiv_id] = (s.version, p)
    for aid, (version, p) in sorted({**out.pdfs, **named}.items()):
        if has_record(aid):
            continue
        s = stamp_of(p)
        where = str(p)
        if s is None:
            out.errors.append(
                RecordParseError(
                    f"no metadata record for {aid} and no arXiv stamp on page 1 of its PDF: v1 date unknown",
                    source=where,
                    hint="add its .abs / Kaggle / Atom record to the mirror",
                )
            )
            continue
        if s.arxiv_id != aid:
            out.errors.append(
                RecordParseError(
                    f"the file is named {aid} but its stamp says {s.arxiv_id} ({s.raw!r}); not used",
                    source=where,
                    hint="rename the file after the id on its stamp",
                )
            )
            continue
        try:
            title, abstract = describe(p)
        except (AcademicEvalError, OSError, RuntimeError, ValueError) as e:
            msg = e.message if isinstance(e, AcademicEvalError) else str(e)
            out.errors.append(RecordParseError(f"stamp read but the PDF cannot be parsed: {msg}", source=where))
            continue
        if not title:
            out.errors.append(RecordParseError(f"stamp read ({s.raw!r}) but no title found", source=where))
            continue
        rec = stamp_to_record(s, p, version=version, title=title, abstract=abstract)
        out.records.append(rec)
        if (rec.meta.version or 1) > 1:
            out.notes.append(
                ApproximateDateNote(
                    f"{aid}: only v{rec.meta.version} is dated ({s.raw!r}); the v1 date is known to the month of "
                    f"the id only: published = {format_date(rec.meta.published, rec.meta.date_precision)}",
                    source=where,
                    hint="add a metadata record (.abs, Kaggle, Atom) for the exact v1 date",
                )
            )
    return out
