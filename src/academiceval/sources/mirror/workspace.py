"""`index_mirror`: read a mirror directory into the workspace (metadata, pre-parsed papers, PDF locations, errors).

Idempotent: running it again upserts the same rows, so an interrupted index is finished by running it again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from academiceval.sources.mirror.index import FormatStats, MirrorIndex, load_index
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

    def rows(self) -> list[tuple[str, int, int, int]]:
        return [(fmt, s.files, s.records, s.errors) for fmt, s in sorted(self.formats.items())]


def index_mirror(
    ws: Workspace, directory: str | Path, progress: Progress | None = None, *, batch: int = 2000
) -> MirrorIndexReport:
    root = Path(directory).resolve()
    idx: MirrorIndex = load_index(root, progress)  # shared with MirrorSource / mirror serve in this process
    report = MirrorIndexReport(root=str(root), formats=dict(idx.stats), skipped_files=idx.skipped_files)
    recs = list(idx.iter_records())
    for i in range(0, len(recs), batch):
        chunk = recs[i : i + batch]
        with ws.transaction() as conn:
            report.papers_stored += ws.upsert_meta((r.meta for r in chunk), conn=conn)
            for r in chunk:
                if r.paper is not None:
                    ws.put_paper(r.paper, path=r.path)
                    report.parsed_papers_stored += 1
    with ws.transaction() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO mirror_pdf VALUES (?,?,?)",
            [(aid, v, str(p)) for aid, (v, p) in sorted(idx.pdfs.items())],
        )
        at = now_iso()
        conn.executemany(
            "INSERT OR REPLACE INTO mirror_error VALUES (?,?,?,?,?)",
            [(e.source or str(root), e.code, e.message, e.hint, at) for e in idx.errors],
        )
    report.pdfs_found = len(idx.pdfs)
    report.errors = [(e.source or str(root), e.message) for e in idx.errors]
    return report


def mirror_pdf_path(ws: Workspace, arxiv_id: str) -> Path | None:
    """Where an indexed mirror holds a paper's PDF (versionless id), if anywhere."""
    row = ws.db.execute("SELECT path FROM mirror_pdf WHERE arxiv_id=?", (arxiv_id,)).fetchone()
    return Path(row[0]) if row else None
