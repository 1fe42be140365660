"""`index_mirror`: read a mirror directory into the workspace (metadata, pre-parsed papers, PDF locations, errors).

Idempotent: running it again upserts the same rows, so an interrupted index is finished by running it again.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval.sources.errors import RecordParseError, SourceError
from academiceval.sources.mirror.index import FormatStats, cached_index
from academiceval.sources.mirror.records import (
    REFERENCE_SOURCE,
    MirrorRecord,
    RecordWarning,
    merge_records,
    standing,
)
from academiceval.sources.mirror.scan import find_files, read_file
from academiceval.sources.mirror.stamped import STAMP_SOURCE, stamp_records
from academiceval.sources.models import PaperMeta
from academiceval.store.workspace import Workspace, now_iso, register_schema

MIRROR_SCHEMA = """
CREATE TABLE IF NOT EXISTS mirror_pdf (
    arxiv_id TEXT PRIMARY KEY,          -- versionless
    version INTEGER,
    path TEXT NOT NULL                  -- absolute path of the PDF inside the mirror
);
CREATE TABLE IF NOT EXISTS mirror_error (
    path TEXT NOT NULL,                 -- file (and record) that could not be read
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    hint TEXT,
    at TEXT NOT NULL,
    PRIMARY KEY (path, message)
);
"""
register_schema("sources_mirror", MIRROR_SCHEMA)

Progress = Callable[[str, int, int], None]


@dataclass
class MirrorIndexReport:
    """What one `mirror index` run read and stored; `formats` has per-format files/records/errors."""

    root: str
    formats: dict[str, FormatStats] = field(default_factory=dict)
    papers_stored: int = 0  # distinct versionless ids written to paper_meta
    parsed_papers_stored: int = 0  # pre-parsed Paper objects (unarXive) written to parsed_paper
    pdfs_found: int = 0
    skipped_files: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (where, reason)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (where, note): e.g. approximate v1 dates
    kept_by_format: dict[str, int] = field(default_factory=dict)  # stored papers whose kept record is of this format

    def rows(self) -> list[tuple[str, int, int, int, int]]:
        """(format, files, records read, papers whose stored record came from it, unreadable records)."""
        return [
            (fmt, s.files, s.records, self.kept_by_format.get(fmt, 0), s.errors)
            for fmt, s in sorted(self.formats.items())
        ]

    def reasons(self) -> list[tuple[str, int, str]]:
        """(reason, count, one example location), most frequent first."""
        groups: dict[str, list[str]] = defaultdict(list)
        for where, msg in self.errors:
            groups[re.sub(r"\d+", "N", msg)[:120]].append(where)
        return sorted(((r, len(w), w[0]) for r, w in groups.items()), key=lambda x: (-x[1], x[0]))


def index_mirror(
    ws: Workspace,
    directory: str | Path,
    progress: Progress | None = None,
    *,
    batch: int = 2000,
    index: Any = None,
) -> MirrorIndexReport:
    """Store every record under `directory` in the workspace; bounded memory.

    Files are streamed one by one and written in transactions of `batch` records; a record of a paper the
    workspace already holds is merged with it (`merge_records`: newer version wins, empty fields filled), so
    formats can arrive in any order and a huge Kaggle snapshot never has to fit in memory. When this process has
    already built the in-memory index of the directory (e.g. `MirrorSource`), that index is reused; so is
    `index` (a `DiskIndex` brought up to date, or a `MirrorIndex`): then nothing is parsed twice.
    """
    root = Path(directory).resolve()
    report = MirrorIndexReport(root=str(root))
    cached = index if index is not None else cached_index(root)
    errors: list[SourceError] = []
    notes: list[SourceError] = []
    pdfs: dict[str, tuple[int | None, Path]] = {}
    unnamed: list[Path] = []
    stored: set[str] = set()
    if cached is not None:
        report.formats, report.skipped_files = dict(cached.stats), cached.skipped_files
        errors, pdfs, notes = list(cached.errors), dict(cached.pdfs.items()), list(cached.notes)
        chunk: list[MirrorRecord] = []
        for rec in cached.iter_records():  # streamed: a disk index may hold millions
            chunk.append(rec)
            if len(chunk) >= batch:
                _write(ws, chunk, report, stored, batch)
                chunk = []
        _write(ws, chunk, report, stored, batch)
        # an index decides its stamps on its own records, where a reference entry may stand for the paper: the
        # workspace gives such a paper its PDF's stamp record (a reference entry is never its own metadata)
        weak = {aid: pdfs[aid] for aid in pdfs if _has_reference_only(ws, aid)}
        if weak:
            res = stamp_records(weak, [], lambda aid: _has_real_record(ws, aid))
            _write(ws, res.records, report, stored, batch)
            st = report.formats.get(STAMP_SOURCE, FormatStats())  # a new object: the index's own stats stay
            report.formats[STAMP_SOURCE] = FormatStats(
                st.files, st.records + len(res.records), st.errors + len(res.errors)
            )
            errors.extend(res.errors)
            notes.extend(res.notes)
        if progress:
            progress("(already indexed in this process)", 1, 1)
    else:
        stats: dict[str, FormatStats] = defaultdict(FormatStats)
        files = find_files(root)
        for n, found in enumerate(files, 1):
            if found.fmt == "skipped":
                report.skipped_files += 1
                if found.path.suffix.lower() == ".pdf":
                    unnamed.append(found.path)
            elif found.fmt == "pdf":
                stats["pdf"].files += 1
                stats["pdf"].records += 1
                assert found.arxiv_id is not None
                old = pdfs.get(found.arxiv_id)
                if old is None or (found.version or 0) > (old[0] or 0):
                    pdfs[found.arxiv_id] = (found.version, found.path)
            else:
                st = stats[found.fmt]
                st.files += 1
                pending: list[MirrorRecord] = []
                for item in read_file(found):
                    if isinstance(item, RecordWarning):  # repaired (bad bytes, NULs): a located note, not an error
                        notes.append(item)
                        continue
                    if isinstance(item, RecordParseError):
                        st.errors += 1
                        errors.append(item)
                        continue
                    st.records += 1
                    pending.append(item)
                    if len(pending) >= batch:
                        _write(ws, pending, report, stored, batch)
                        pending = []
                _write(ws, pending, report, stored, batch)
            if progress:
                progress(found.path.name, n, len(files))
        res = stamp_records(pdfs, unnamed, lambda aid: _has_real_record(ws, aid))
        if res.stamps_read:
            stats[STAMP_SOURCE] = FormatStats(res.stamps_read, len(res.records), len(res.errors))
        _write(ws, res.records, report, stored, batch)
        pdfs.update(res.pdfs)
        errors.extend(res.errors)
        notes.extend(res.notes)
        report.formats = dict(stats)
    with ws.transaction() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO mirror_pdf VALUES (?,?,?)", [(a, v, str(p)) for a, (v, p) in sorted(pdfs.items())]
        )
        at = now_iso()
        conn.executemany(
            "INSERT OR REPLACE INTO mirror_error VALUES (?,?,?,?,?)",
            [(e.source or str(root), e.code, e.message, e.hint, at) for e in [*errors, *notes]],
        )
    report.papers_stored = len(stored)
    kept: dict[str, int] = defaultdict(int)
    ids = sorted(stored)
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        sql = f"SELECT source FROM paper_meta WHERE arxiv_id IN ({','.join('?' * len(chunk))})"
        for row in ws.db.execute(sql, chunk):
            kept[_FORMAT_OF.get(row[0], row[0])] += 1
    report.kept_by_format = dict(kept)
    report.pdfs_found = len(pdfs)
    report.errors = [(e.source or str(root), e.message) for e in errors]
    report.notes = [(e.source or str(root), e.message) for e in notes]
    return report


_FORMAT_OF = {REFERENCE_SOURCE: "scalar_paper"}  # the mirror format a PaperMeta.source comes from, where they differ


def _stored_source(ws: Workspace, arxiv_id: str) -> str | None:
    row = ws.db.execute("SELECT source FROM paper_meta WHERE arxiv_id=?", (arxiv_id,)).fetchone()
    return None if row is None else str(row[0])


def _has_real_record(ws: Workspace, arxiv_id: str) -> bool:
    """The paper has metadata of its own (not only its PDF's stamp, not only a reference entry)."""
    src = _stored_source(ws, arxiv_id)
    return src is not None and standing(src) == 2


def _has_reference_only(ws: Workspace, arxiv_id: str) -> bool:
    src = _stored_source(ws, arxiv_id)
    return src is not None and standing(src) == 0


def _write(ws: Workspace, recs: list[MirrorRecord], report: MirrorIndexReport, stored: set[str], batch: int) -> None:
    for i in range(0, len(recs), batch):
        merged: dict[str, MirrorRecord] = {}
        for r in recs[i : i + batch]:
            old = merged.get(r.meta.arxiv_id)
            merged[r.meta.arxiv_id] = r if old is None else merge_records(old, r)
        with ws.transaction() as conn:
            out: list[MirrorRecord] = []
            paper_paths: dict[str, str] = {}  # where each paper was read from (not the stored record's empty path)
            texts: list[MirrorRecord] = []
            for aid, r in merged.items():
                if r.paper is not None:
                    paper_paths[aid] = r.path
                row = conn.execute("SELECT json FROM paper_meta WHERE arxiv_id=?", (aid,)).fetchone()
                if row is not None:
                    prev = PaperMeta.model_validate_json(row["json"])
                    # a record of lower standing (a stamp, a reference entry) never mixes with one of higher
                    # standing; one of higher standing replaces it whole (records.standing)
                    if standing(r.meta.source) < standing(prev.source):
                        stored.add(aid)
                        if r.paper is not None:
                            texts.append(r)  # its text is still the paper's text (a cited paper's sections)
                        continue
                    if standing(prev.source) < standing(r.meta.source):
                        conn.execute("DELETE FROM paper_meta WHERE arxiv_id=?", (aid,))  # upsert keeps higher v
                    at = datetime.combine(prev.published, datetime.min.time(), tzinfo=UTC)
                    r = merge_records(MirrorRecord(prev, at), r)
                out.append(r)
            ws.upsert_meta((r.meta for r in out), conn=conn)
            stored.update(merged)
            for r in [*out, *texts]:
                if r.paper is not None:  # the same path whether or not an earlier (killed) run stored the paper
                    ws.put_paper(r.paper, path=paper_paths.get(r.meta.arxiv_id, r.path))
                    report.parsed_papers_stored += 1


def mirror_pdf_path(ws: Workspace, arxiv_id: str) -> Path | None:
    """Where an indexed mirror holds a paper's PDF (versionless id), if anywhere."""
    row = ws.db.execute("SELECT path FROM mirror_pdf WHERE arxiv_id=?", (arxiv_id,)).fetchone()
    return Path(row[0]) if row else None


def mirror_pdf_ids(ws: Workspace, limit: int | None = None) -> list[str]:
    """arXiv ids with a PDF in the indexed mirror; those with metadata first (only they can become samples)."""
    rows = ws.db.execute(
        """
        SELECT p.arxiv_id, (m.arxiv_id IS NOT NULL) AS has_meta FROM mirror_pdf p
        LEFT JOIN paper_meta m ON m.arxiv_id = p.arxiv_id
        ORDER BY has_meta DESC, p.arxiv_id
        """
    ).fetchall()
    ids = [r[0] for r in rows]
    return ids if limit is None else ids[:limit]


def first_authors_with_text(ws: Workspace, n: int) -> list[str]:
    """Names of first authors of indexed papers that have a parsed text (pre-parsed mirror papers) or a PDF in the
    mirror, most recent paper first: the authors a round can be built around."""
    rows = ws.db.execute(
        """
        SELECT a.name FROM authorship a JOIN paper_meta m ON m.arxiv_id = a.arxiv_id
        WHERE a.position = 0 AND (a.arxiv_id IN (SELECT arxiv_id FROM parsed_paper)
                                  OR a.arxiv_id IN (SELECT arxiv_id FROM mirror_pdf))
        ORDER BY m.published DESC, m.arxiv_id
        """
    ).fetchall()
    seen: dict[str, None] = {}
    for r in rows:
        seen.setdefault(r[0], None)
    return list(seen)[:n]
