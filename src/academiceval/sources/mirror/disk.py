"""`DiskIndex`: the mirror index in one SQLite file — bounded memory, resumable, incremental.

Why SQLite and not the in-memory `MirrorIndex`: the Kaggle snapshot holds ~2.7M records (~4.5 GB); parsed into
Python objects it does not fit a laptop, and rebuilding it in every process costs minutes. Why SQLite and not
DuckDB (both measured, `benchmarks/index_engines.py`): the work here is many small upserts with merges and
index probes that return a page of rows (OLTP), which SQLite's B-trees do well; DuckDB wins on whole-column
scans, which nothing here needs. See notes/scale.md for the figures.

Layout (one file, WAL):
- `rec`: one row per versionless id — v1/updated timestamps, categories, author keys (for `au:` verification
  without decoding), and the merged `PaperMeta` as zstd-compressed JSON (`disk_rows.pack`);
- `cat(rid, cat, pub)` and `author(rid, pos, skey, pub)`: the category and surname postings, each with the v1
  timestamp so a date window + category (or author) query is one index range scan (`cat_q`, `author_q`);
- `title_fts`: FTS5 over title tokens, a pre-filter for `ti:` look-ups (verified exactly afterwards);
- `file`: per file the format, size, mtime, a fingerprint of its first 64 KiB and of the 4 KiB before the
  byte offset read so far, and the line count. JSON-lines files (Kaggle, unarXive) are read from that offset:
  a grown snapshot adds only its new lines; a killed build resumes from the last committed batch (offset and
  records commit in one transaction); a file whose head changed is read again from the start (records merge,
  so re-reading is idempotent). Other files are re-read when size or mtime change.
- `error`, `pdf`, `paper` (pre-parsed unarXive papers), `name_evidence` (records of one paper from two files:
  what `NameResolver` needs), `kv`.

Secondary indexes are created after a fresh bulk load (a sort is much cheaper than 10⁷ random B-tree inserts)
and maintained by later incremental updates. Queries are compiled to SQL where the index answers them exactly
(`disk_query.py`); the rest is verified in Python on the SQL candidates.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from academiceval.sources.entries import PageEntry
from academiceval.sources.errors import (
    InvalidArxivIdError,
    QueryTimeoutError,
    RecordParseError,
    SourceError,
    SourceNotFoundError,
)
from academiceval.sources.ids import parse_arxiv_id
from academiceval.sources.mirror.disk_errors import guarded
from academiceval.sources.mirror.disk_query import gc_paused, run_query
from academiceval.sources.mirror.disk_rows import (
    LINE_FORMATS,
    SEP,
    Parsed,
    Prepared,
    dt_of,
    parse_chunk,
    parse_line,
    posted_categories,
    prepare,
    unpack,
    unprepare,
)
from academiceval.sources.mirror.index import FormatStats
from academiceval.sources.mirror.records import MirrorRecord, combine, standing
from academiceval.sources.mirror.scan import FoundFile, find_files, read_file
from academiceval.sources.mirror.stamped import STAMP_SOURCE, stamp_records
from academiceval.sources.names import NameResolver
from academiceval.store.paper_models import Author, Paper, PaperMeta

Progress = Callable[[str, int, int], None]
BATCH = 5000
READ_CACHE_KIB = 8192  # SQLite page cache of a reading connection (one per thread: `mirror serve` has 8 workers)
WRITE_CACHE_KIB = 65536  # of the connection that builds the index, while it does
HEAD_BYTES = 65536
TAIL_BYTES = 4096
__all__ = ["LINE_FORMATS", "DiskIndex", "IndexUpdate", "combine", "open_index", "posted_categories"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS file (
    path TEXT PRIMARY KEY, fmt TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    head TEXT NOT NULL, offset INTEGER NOT NULL DEFAULT 0, tail TEXT NOT NULL DEFAULT '',
    lines INTEGER NOT NULL DEFAULT 0, records INTEGER NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS rec (
    rid INTEGER PRIMARY KEY, arxiv_id TEXT NOT NULL UNIQUE, pub INTEGER NOT NULL, upd INTEGER,
    usort INTEGER NOT NULL, source TEXT NOT NULL, cats TEXT NOT NULL, akeys TEXT NOT NULL, meta BLOB NOT NULL,
    path TEXT NOT NULL, fmt TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cat (rid INTEGER NOT NULL, cat TEXT NOT NULL, pub INTEGER NOT NULL,
    PRIMARY KEY (rid, cat)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS author (rid INTEGER NOT NULL, pos INTEGER NOT NULL, skey TEXT NOT NULL,
    pub INTEGER NOT NULL, PRIMARY KEY (rid, pos)) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS title_fts USING fts5(title, tokenize='unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS paper (rid INTEGER PRIMARY KEY, json BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS pdf (arxiv_id TEXT PRIMARY KEY, version INTEGER, path TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS error (loc TEXT NOT NULL, message TEXT NOT NULL, path TEXT NOT NULL, code TEXT NOT NULL,
    hint TEXT, note INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (loc, message));
CREATE TABLE IF NOT EXISTS name_evidence (n INTEGER PRIMARY KEY, arxiv_id TEXT NOT NULL, authors TEXT NOT NULL);
"""
SECONDARY = """
CREATE INDEX IF NOT EXISTS rec_pub ON rec(pub, arxiv_id);
CREATE INDEX IF NOT EXISTS rec_upd ON rec(usort, arxiv_id);
CREATE INDEX IF NOT EXISTS cat_q ON cat(cat, pub);
CREATE INDEX IF NOT EXISTS author_q ON author(skey, pub);
CREATE INDEX IF NOT EXISTS evidence_id ON name_evidence(arxiv_id);
"""


@dataclass
class IndexUpdate:
    """What one `DiskIndex.update` read: files by state, records added/merged, unreadable lines (located)."""

    root: str = ""
    files: int = 0
    files_unchanged: int = 0
    files_grown: int = 0  # JSON-lines files read on from their stored offset
    files_read: int = 0  # read from the start (new or replaced)
    bytes_read: int = 0
    lines_read: int = 0
    records_added: int = 0
    records_merged: int = 0
    errors: int = 0
    truncated_tails: list[str] = field(default_factory=list)  # last lines without newline left for next time
    seconds: float = 0.0


def _sha(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


class _Pdfs:
    """`index.pdfs.get(id) -> (version, path) | None`, like the in-memory index's dict."""

    def __init__(self, idx: DiskIndex) -> None:
        self._idx = idx
        self.db_path = idx.db_path  # errors name the index file (disk_errors.guarded)

    @guarded
    def get(self, arxiv_id: str, default: Any = None) -> tuple[int | None, Path] | Any:
        row = self._idx.conn().execute("SELECT version, path FROM pdf WHERE arxiv_id=?", (arxiv_id,)).fetchone()
        return (row[0], Path(row[1])) if row else default

    def __contains__(self, arxiv_id: object) -> bool:
        return isinstance(arxiv_id, str) and self.get(arxiv_id) is not None

    @guarded
    def __len__(self) -> int:
        return int(self._idx.conn().execute("SELECT COUNT(*) FROM pdf").fetchone()[0])

    @guarded
    def items(self) -> Iterator[tuple[str, tuple[int | None, Path]]]:
        for aid, v, p in self._idx.conn().execute("SELECT arxiv_id, version, path FROM pdf ORDER BY arxiv_id"):
            yield aid, (v, Path(p))


class DiskIndex:
    """The reader API of `MirrorIndex` (get, search, search_page, iter_records, pdfs, stats, errors, names,
    len) over a SQLite file; `update(root)` reads a mirror into it. Safe to query from several threads."""

    @guarded
    def __init__(self, db_path: str | Path, root: str | Path | None = None, *, workers: int | None = None) -> None:
        """`workers`: processes parsing JSON lines while this one writes (None: one for files over 64 MB)."""
        self.db_path = Path(db_path)
        self.workers = workers
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        c = self.conn()
        c.executescript(SCHEMA)
        stored = self._kv("root")
        self.root = Path(root).resolve() if root is not None else Path(stored or ".")
        if root is not None and stored and Path(stored) != self.root:
            raise SourceNotFoundError(
                f"the index {self.db_path} was built for {stored}, not {self.root}",
                source=str(self.db_path),
                hint="use another index file per mirror directory",
            )
        self.pdfs = _Pdfs(self)
        self._names: NameResolver | None = None
        self._papers: bool | None = None  # does the index hold pre-parsed papers (cached; reset by update)

    # ---- connections ----------------------------------------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            c = self._connect()
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=NORMAL")
            c.execute(f"PRAGMA cache_size=-{READ_CACHE_KIB}")  # bounded whatever the file size; the writer: more
            c.execute("PRAGMA temp_store=FILE")
            c.execute("PRAGMA mmap_size=0")
            self._local.conn = c
        return c

    @contextmanager
    def _write_cache(self) -> Iterator[None]:
        c = self.conn()
        c.execute(f"PRAGMA cache_size=-{WRITE_CACHE_KIB}")
        try:
            yield
        finally:
            c.execute(f"PRAGMA cache_size=-{READ_CACHE_KIB}")

    @contextmanager
    def time_limit(self, seconds: float | None) -> Iterator[None]:
        """Queries of this thread stop with `QueryTimeoutError` after `seconds` (SQLite's progress handler
        interrupts the statement): one pathological query cannot hold a server worker for good."""
        if not seconds:
            yield
            return
        c = self.conn()
        end = time.monotonic() + seconds
        c.set_progress_handler(lambda: int(time.monotonic() > end), 1000)
        try:
            yield
        except sqlite3.OperationalError as e:
            if "interrupted" not in str(e):
                raise
            raise QueryTimeoutError(
                f"the query ran longer than {seconds:g} s and was stopped", source=str(self.db_path),
                hint="narrow it (a date window, a category), or retry later",
            ) from e  # fmt: skip
        finally:
            c.set_progress_handler(None, 0)

    def _connect(self) -> sqlite3.Connection:
        """A new connection to the index file (a test overrides it to stop the build at any statement)."""
        return sqlite3.connect(self.db_path, timeout=60, isolation_level=None, check_same_thread=False)

    def close(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    def _kv(self, k: str) -> str | None:
        row = self.conn().execute("SELECT v FROM kv WHERE k=?", (k,)).fetchone()
        return row[0] if row else None

    def _set_kv(self, k: str, v: str) -> None:
        self.conn().execute("INSERT OR REPLACE INTO kv VALUES (?,?)", (k, v))

    # ---- building -------------------------------------------------------------------------------------------
    @classmethod
    def build(
        cls, root: str | Path, db_path: str | Path, progress: Progress | None = None, *, batch: int = BATCH
    ) -> DiskIndex:
        idx = cls(db_path, root)
        idx.update(progress=progress, batch=batch)
        return idx

    @guarded
    def update(self, progress: Progress | None = None, *, batch: int = BATCH) -> IndexUpdate:
        """Read what is new under the mirror root (everything, the first time). Safe to kill at any point."""
        t0 = time.perf_counter()
        rep = IndexUpdate(root=str(self.root))
        if not self.root.exists():
            raise SourceNotFoundError(
                f"mirror not found: {self.root}", hint="pass a directory (or file) holding arXiv data"
            )
        with self._write_lock, self._write_cache():
            c = self.conn()
            self._set_kv("root", str(self.root))
            fresh = c.execute("SELECT COUNT(*) FROM rec").fetchone()[0] == 0
            if fresh:  # bulk load: postings indexes are built by one sort at the end (see module docstring)
                for name in ("rec_pub", "rec_upd", "cat_q", "author_q"):
                    c.execute(f"DROP INDEX IF EXISTS {name}")
            self._set_kv("complete", "0")
            files = find_files(self.root)
            skipped, new_pdfs, unnamed = 0, {}, []
            pdf_marks: list[FoundFile] = []  # PDF files read this run: marked done with their rows, not before
            for n, found in enumerate(files, 1):
                rep.files += 1
                if found.fmt == "skipped":
                    skipped += 1
                    if found.path.suffix.lower() == ".pdf" and self._file_changed(found):
                        unnamed.append(found.path)
                        pdf_marks.append(found)
                elif found.fmt == "pdf":
                    if self._file_changed(found):
                        assert found.arxiv_id is not None
                        old = self.pdfs.get(found.arxiv_id)
                        if old is None or (found.version or 0) > (old[0] or 0):
                            new_pdfs[found.arxiv_id] = (found.version, found.path)
                        pdf_marks.append(found)
                    else:
                        rep.files_unchanged += 1
                elif found.fmt in LINE_FORMATS:
                    self._read_lines(found, rep, batch, progress)
                else:
                    self._read_whole(found, rep, batch)
                if progress:
                    progress(found.path.name, n, len(files))
            self._set_kv("skipped_files", str(skipped))
            self._store_pdfs(new_pdfs, unnamed, pdf_marks, rep)
            if progress:
                progress("building indexes", len(files), len(files))
            c.executescript(SECONDARY)
            c.execute("PRAGMA optimize")
            self._set_kv("complete", "1")
        self._names, self._papers = None, None
        rep.seconds = time.perf_counter() - t0
        return rep

    @guarded
    def add(self, records: list[MirrorRecord], *, source: str = "") -> int:
        """Store records from outside the mirror directory (an OAI-PMH harvest), merged like mirror records;
        one transaction. Returns how many were stored."""
        if not records:
            return 0
        with self._write_lock, self._tx():
            self._store([prepare(r) for r in records], [], IndexUpdate(root=source or str(self.root)))
        self._names = None
        return len(records)

    class _Tx:
        def __init__(self, c: sqlite3.Connection) -> None:
            self.c = c

        def __enter__(self) -> sqlite3.Connection:
            self.c.execute("BEGIN IMMEDIATE")
            return self.c

        def __exit__(self, exc_type: object, *a: object) -> None:
            self.c.execute("ROLLBACK" if exc_type else "COMMIT")

    def _tx(self) -> DiskIndex._Tx:
        return DiskIndex._Tx(self.conn())

    def _file_row(self, path: Path) -> sqlite3.Row | None:
        c = self.conn()
        c.row_factory = sqlite3.Row
        try:
            return c.execute("SELECT * FROM file WHERE path=?", (str(path),)).fetchone()
        finally:
            c.row_factory = None

    def _file_changed(self, found: FoundFile) -> bool:
        row = self._file_row(found.path)
        st = found.path.stat()
        return row is None or not row["done"] or row["size"] != st.st_size or row["mtime_ns"] != st.st_mtime_ns

    def _mark_file(self, found: FoundFile, *, done: bool, records: int = 0, errors: int = 0) -> None:
        st = found.path.stat()
        self.conn().execute(
            "INSERT OR REPLACE INTO file (path, fmt, size, mtime_ns, head, offset, lines, records, errors, done) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)",
            (str(found.path), found.fmt, st.st_size, st.st_mtime_ns, "", st.st_size, 0, records, errors, int(done)),
        )

    def _read_whole(self, found: FoundFile, rep: IndexUpdate, batch: int) -> None:
        if not self._file_changed(found):
            rep.files_unchanged += 1
            return
        rep.files_read += 1
        rep.bytes_read += found.path.stat().st_size
        pending: list[Prepared] = []
        errors: list[SourceError] = []
        nrec = nerr = 0
        for item in read_file(found):
            if isinstance(item, RecordParseError):
                errors.append(item)
                nerr += 1
                rep.errors += 1
            else:
                pending.append(prepare(item))
                nrec += 1
        with self._tx():
            self._store(pending, errors, rep)
            self._mark_file(found, done=True, records=nrec, errors=nerr)

    def _read_lines(self, found: FoundFile, rep: IndexUpdate, batch: int, progress: Progress | None) -> None:
        """Stream a JSON-lines file from its stored offset; each batch commits with the new offset. With
        `workers`, lines are parsed in worker processes (in order) while this process writes."""
        path = found.path
        st = path.stat()
        row = self._file_row(path)
        with path.open("rb") as f:
            head = _sha(f.read(HEAD_BYTES))
            start, lineno, nrec, nerr = 0, 0, 0, 0
            if row is not None and row["head"] == head and st.st_size >= row["offset"]:
                off = row["offset"]
                f.seek(max(0, off - TAIL_BYTES))
                if _sha(f.read(off - max(0, off - TAIL_BYTES))) == row["tail"]:
                    start, lineno, nrec, nerr = off, row["lines"], row["records"], row["errors"]
            if row is not None and start == st.st_size and start == row["offset"]:
                rep.files_unchanged += 1
                return
            if start:
                rep.files_grown += 1
            else:
                rep.files_read += 1
            f.seek(start)
            where = str(path)
            tail: list[tuple[int, int, bytes]] = []  # a last line without newline, seen by the chunker
            chunks = _chunks(f, start, lineno, found.fmt, where, min(batch, 1000), tail)
            workers = self.workers if self.workers is not None else (1 if st.st_size - start > 64 << 20 else 0)
            pool = None
            stop = threading.Event()
            if workers > 0 and (os.cpu_count() or 1) > 1:
                pool = multiprocessing.get_context("fork").Pool(workers)
            pos = start
            pending: list[Prepared] = []
            errors: list[SourceError] = []
            try:
                # at most `ahead` chunks parsed but not yet written: memory stays bounded if the writer is slower
                ahead = threading.Semaphore(2 * workers + 2)
                results = (
                    pool.imap(_parse_paused, _gated(chunks, ahead, stop), chunksize=1)
                    if pool
                    else map(_parse_paused, chunks)
                )
                for parsed in results:
                    if pool:
                        ahead.release()
                    with gc_paused():  # the writer's side of _parse_paused
                        for n, end, item in parsed:
                            lineno, pos = n, end
                            rep.lines_read += 1
                            if isinstance(item, RecordParseError):
                                errors.append(item)
                                nerr += 1
                                rep.errors += 1
                            elif item is not None:
                                pending.append(item)
                                nrec += 1
                        if len(pending) >= batch:
                            self._commit_lines(found, head, pos, lineno, nrec, nerr, pending, errors, rep)
                            pending, errors = [], []
                            if progress:
                                progress(f"{path.name} line {lineno:,}", pos, st.st_size)
            finally:
                if pool is not None:
                    stop.set()  # a feeder thread waiting at the gate must be let go, or terminate() waits forever
                    for _ in range(4 * workers + 4):
                        ahead.release()
                    pool.terminate()
            rep.bytes_read += pos - start
            for n, at, line in tail:  # cut mid-line (a download in progress)? then leave it for when it grows
                item = parse_line(line, LINE_FORMATS[found.fmt], f"{where}:{n}", at)
                if isinstance(item, RecordParseError):
                    rep.truncated_tails.append(f"{where}:{n}")
                    errors.append(
                        RecordParseError(
                            f"truncated last line (no newline, {len(line)} bytes at byte {at})",
                            source=f"{where}:{n}",
                            hint="read again from this offset when the file grows",
                        )
                    )
                    rep.errors += 1
                else:
                    pending.append(item)
                    lineno, pos, nrec = n, at + len(line), nrec + 1
                    rep.lines_read += 1
            self._commit_lines(found, head, pos, lineno, nrec, nerr, pending, errors, rep)

    def _commit_lines(self, found, head, pos, lineno, nrec, nerr, pending, errors, rep) -> None:
        # a handle of its own: the pool's feeder thread is reading lines from the other one right now
        with found.path.open("rb") as g:
            g.seek(max(0, pos - TAIL_BYTES))
            tail = _sha(g.read(pos - max(0, pos - TAIL_BYTES)))
        st = found.path.stat()
        with self._tx() as c:
            self._store(pending, errors, rep)
            c.execute(
                "INSERT OR REPLACE INTO file (path, fmt, size, mtime_ns, head, offset, tail, lines, records, errors,"
                " done) VALUES (?,?,?,?,?,?,?,?,?,?,1)",
                (str(found.path), found.fmt, st.st_size, st.st_mtime_ns, head, pos, tail, lineno, nrec, nerr),
            )

    def _store_pdfs(
        self,
        pdfs: dict[str, tuple[int | None, Path]],
        unnamed: list[Path],
        marks: list[FoundFile],
        rep: IndexUpdate,
    ) -> None:
        """PDF locations, the records read from PDF stamps, and the PDF files' "done" marks, in one transaction:
        killed before it, the next run reads the same PDFs again; never a PDF marked done without its rows."""
        res = None
        if pdfs or unnamed:

            def has_real(aid: str) -> bool:
                row = self.conn().execute("SELECT source FROM rec WHERE arxiv_id=?", (aid,)).fetchone()
                return row is not None and standing(row[0]) == 2  # its own metadata (records.standing)

            res = stamp_records(pdfs, unnamed, has_real)
        with self._tx() as c:
            c.executemany(
                "INSERT OR REPLACE INTO pdf VALUES (?,?,?)", [(a, v, str(p)) for a, (v, p) in sorted(pdfs.items())]
            )
            if res is not None:
                c.executemany(
                    "INSERT OR REPLACE INTO pdf VALUES (?,?,?)",
                    [(a, v, str(p)) for a, (v, p) in sorted(res.pdfs.items())],
                )
                self._store([prepare(r) for r in res.records], [*res.errors], rep)
                self._store([], list(res.notes), rep, note=True)
                if res.stamps_read:
                    c.execute(
                        "INSERT OR REPLACE INTO kv VALUES ('stamp_stats', ?)",
                        (json.dumps([res.stamps_read, len(res.records), len(res.errors)]),),
                    )
            for found in marks:
                self._mark_file(found, done=True, records=int(found.fmt == "pdf"))

    def _store(self, rows: list[Prepared], errors: list[SourceError], rep: IndexUpdate, *, note: bool = False) -> None:
        """Upsert rows (merging with stored ones) and errors; call inside a transaction."""
        c = self.conn()
        if errors:
            c.executemany(
                "INSERT OR REPLACE INTO error VALUES (?,?,?,?,?,?)",
                [
                    (e.source or str(self.root), e.message, (e.source or "").split(":")[0], e.code, e.hint, int(note))
                    for e in errors
                ],
            )
        if not rows:
            return
        ids = list({p.arxiv_id for p in rows})
        stored: dict[str, tuple[int, Prepared]] = {}
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            marks = ",".join("?" * len(chunk))
            # the stored pre-parsed paper comes along: a merge keeps the winner's paper, as the in-memory index does
            cols = "r.rid, r.arxiv_id, r.pub, r.upd, r.source, r.cats, r.akeys, r.meta, r.path, r.fmt, p.json"
            for rid, aid, pub, upd, source, cats, akeys, blob, path, fmt, paper in c.execute(
                f"SELECT {cols} FROM rec r LEFT JOIN paper p ON p.rid = r.rid WHERE r.arxiv_id IN ({marks})", chunk
            ):
                keys = akeys.split(SEP) if akeys else []
                old = Prepared(aid, pub, upd, source, cats.split(), keys, blob, "", path, fmt, paper)
                stored[aid] = (rid, old)
        state: dict[str, tuple[int | None, Prepared]] = {}
        evidence: list[tuple[str, str]] = []
        for p in rows:
            aid = p.arxiv_id
            prev = state.get(aid) or stored.get(aid)
            if prev is None:
                state[aid] = (None, p)
                rep.records_added += 1
                continue
            rid, old_p = prev
            old, new = unprepare(old_p), unprepare(p)
            if not self._observed(aid, evidence):  # the evidence NameResolver needs (see names.py)
                evidence.append((aid, _authors_json(old.meta.authors)))
            evidence.append((aid, _authors_json(new.meta.authors)))
            state[aid] = (rid, prepare(combine(old, new)))
            rep.records_merged += 1
        next_rid = (c.execute("SELECT MAX(rid) FROM rec").fetchone()[0] or 0) + 1
        rec_rows, cat_rows, au_rows, fts_rows, paper_rows, old_rids = [], [], [], [], [], []
        for rid, p in state.values():
            if rid is None:
                rid, next_rid = next_rid, next_rid + 1
            else:
                old_rids.append(rid)
            rec_rows.append(p.rec_row(rid))
            cats, authors = p.postings(rid)
            cat_rows += cats
            au_rows += authors
            fts_rows.append((rid, p.title))
            if p.paper is not None:
                paper_rows.append((rid, p.paper))
            elif rid in old_rids:
                c.execute("DELETE FROM paper WHERE rid=?", (rid,))
        for i in range(0, len(old_rids), 900):
            chunk = old_rids[i : i + 900]
            marks = ",".join("?" * len(chunk))
            for table, col in (("cat", "rid"), ("author", "rid"), ("title_fts", "rowid")):
                c.execute(f"DELETE FROM {table} WHERE {col} IN ({marks})", chunk)
        c.executemany("INSERT OR REPLACE INTO rec VALUES (?,?,?,?,?,?,?,?,?,?,?)", rec_rows)
        c.executemany("INSERT OR REPLACE INTO cat VALUES (?,?,?)", cat_rows)
        c.executemany("INSERT OR REPLACE INTO author VALUES (?,?,?,?)", au_rows)
        c.executemany("INSERT INTO title_fts (rowid, title) VALUES (?,?)", fts_rows)
        c.executemany("INSERT OR REPLACE INTO paper VALUES (?,?)", paper_rows)
        c.executemany("INSERT INTO name_evidence (arxiv_id, authors) VALUES (?,?)", evidence)

    def _observed(self, aid: str, pending: list[tuple[str, str]]) -> bool:
        if any(a == aid for a, _ in pending):
            return True
        return (
            self.conn().execute("SELECT 1 FROM name_evidence WHERE arxiv_id=? LIMIT 1", (aid,)).fetchone() is not None
        )

    # ---- reading --------------------------------------------------------------------------------------------
    @guarded
    def __len__(self) -> int:
        return int(self.conn().execute("SELECT COUNT(*) FROM rec").fetchone()[0])

    @property
    @guarded
    def complete(self) -> bool:
        return self._kv("complete") == "1"

    def record_of(self, row: tuple[Any, ...]) -> MirrorRecord:
        """(rid, meta blob, pub, upd, path, fmt) → MirrorRecord (with its pre-parsed paper, if any)."""
        rid, blob, pub, upd, path, fmt = row
        meta = PaperMeta.model_validate_json(unpack(blob))
        paper = None
        if self._has_papers():
            prow = self.conn().execute("SELECT json FROM paper WHERE rid=?", (rid,)).fetchone()
            paper = Paper.model_validate_json(unpack(prow[0])) if prow else None
        return MirrorRecord(meta, dt_of(pub), dt_of(upd), path=path, fmt=fmt, paper=paper)

    def _has_papers(self) -> bool:
        if self._papers is None:
            self._papers = self.conn().execute("SELECT 1 FROM paper LIMIT 1").fetchone() is not None
        return self._papers

    @guarded
    def get(self, arxiv_id: str) -> MirrorRecord | None:
        try:
            base, _ = parse_arxiv_id(arxiv_id)
        except InvalidArxivIdError:
            return None
        row = self.conn().execute("SELECT rid, meta, pub, upd, path, fmt FROM rec WHERE arxiv_id=?", (base,)).fetchone()
        return self.record_of(row) if row else None

    @guarded
    def records_by_rid(self, rids: list[int]) -> list[MirrorRecord]:
        """Decode a page of records. The cyclic garbage collector is paused meanwhile: decoding a page of 2,000
        allocates ~10⁵ containers (none in a cycle), and the collections they trigger walk the process's live
        objects again and again: with the GC running a page took 1.4-2x as long at 10⁶ records (p50 113-121 vs
        61-86 ms; `benchmarks/mirror_scale.py --breakdown`). One collection still follows the page."""
        out: dict[int, MirrorRecord] = {}
        with gc_paused():
            for i in range(0, len(rids), 900):
                chunk = rids[i : i + 900]
                q = f"SELECT rid, meta, pub, upd, path, fmt FROM rec WHERE rid IN ({','.join('?' * len(chunk))})"
                for row in self.conn().execute(q, chunk):
                    out[row[0]] = self.record_of(row)
        return [out[r] for r in rids if r in out]

    @guarded
    def metas_by_rid(self, rids: list[int]) -> list[PaperMeta]:
        """A page as bare `PaperMeta`s — what `MirrorSource.search` hands back: no `MirrorRecord`, no timestamps,
        no pre-parsed paper looked up per row (one query per record when the index holds papers). One SQL query
        per 900 ids, the cyclic GC paused while decoding (see `records_by_rid`)."""
        blobs: dict[int, bytes] = {}
        c = self.conn()
        for i in range(0, len(rids), 900):
            chunk = rids[i : i + 900]
            blobs.update(c.execute(f"SELECT rid, meta FROM rec WHERE rid IN ({','.join('?' * len(chunk))})", chunk))
        validate = PaperMeta.model_validate_json
        with gc_paused():
            return [validate(unpack(blobs[r])) for r in rids if r in blobs]

    @guarded
    def meta_of_rid(self, rid: int) -> PaperMeta:
        (blob,) = self.conn().execute("SELECT meta FROM rec WHERE rid=?", (rid,)).fetchone()
        return PaperMeta.model_validate_json(unpack(blob))

    @guarded
    def entries_by_rid(self, rids: list[int]) -> list[PageEntry]:
        """A page as light entries from the index's columns (id, v1 date, author keys); each
        entry's `meta()` decodes its record when asked (`sources/entries.py`)."""
        cols: dict[int, tuple[Any, ...]] = {}
        c = self.conn()
        for i in range(0, len(rids), 900):
            chunk = rids[i : i + 900]
            q = f"SELECT rid, arxiv_id, pub, akeys FROM rec WHERE rid IN ({','.join('?' * len(chunk))})"
            cols.update((row[0], row) for row in c.execute(q, chunk))
        # one `date` per UTC day of the page (a window page spans days to weeks), not one per hit: 0.6 µs each
        day = {d: _utc_day(d * 86400) for d in {row[2] // 86400 for row in cols.values()}}
        load = self.meta_of_rid
        return [
            PageEntry(aid, day[pub // 86400], tuple(ak.split(SEP)) if ak else (), partial(load, rid))
            for rid, aid, pub, ak in (cols[r] for r in rids if r in cols)
        ]

    @guarded
    def search_entries(
        self, query: Any, *, start: int = 0, max_results: int | None = 100, sort_by: str = "submittedDate",
        sort_order: str = "descending",
    ) -> tuple[int, list[PageEntry]]:  # fmt: skip
        """`search_page` handing back light entries (what `graph update` scans a window with)."""
        return run_query(self, query, start=start, max_results=max_results, sort_by=sort_by, sort_order=sort_order,
                         decode=self.entries_by_rid)  # fmt: skip

    @guarded
    def search_metas(
        self, query: Any, *, start: int = 0, max_results: int | None = 100, sort_by: str = "submittedDate",
        sort_order: str = "descending",
    ) -> tuple[int, list[PaperMeta]]:  # fmt: skip
        """`search_page` decoding only the metadata (the page `MirrorSource.search` returns)."""
        return run_query(self, query, start=start, max_results=max_results, sort_by=sort_by, sort_order=sort_order,
                         decode=self.metas_by_rid)  # fmt: skip

    @guarded
    def iter_records(self) -> Iterator[MirrorRecord]:
        """Every record in (v1 date, id) order, streamed."""
        for row in self.conn().execute("SELECT rid, meta, pub, upd, path, fmt FROM rec ORDER BY pub, arxiv_id"):
            yield self.record_of(row)

    def search(
        self, query: Any, *, sort_by: str = "submittedDate", sort_order: str = "descending"
    ) -> list[MirrorRecord]:
        return self.search_page(query, start=0, max_results=None, sort_by=sort_by, sort_order=sort_order)[1]

    @guarded
    def search_page(
        self,
        query: Any,
        *,
        start: int = 0,
        max_results: int | None = 100,
        sort_by: str = "submittedDate",
        sort_order: str = "descending",
    ) -> tuple[int, list[MirrorRecord]]:
        """(total hits, the page of records) — only the page's records are decoded."""
        return run_query(self, query, start=start, max_results=max_results, sort_by=sort_by, sort_order=sort_order)

    @property
    @guarded
    def stats(self) -> dict[str, FormatStats]:
        out: dict[str, FormatStats] = defaultdict(FormatStats)
        q = "SELECT fmt, COUNT(*), SUM(records), SUM(errors) FROM file WHERE fmt != 'skipped' GROUP BY fmt"
        for fmt, nfiles, nrec, nerr in self.conn().execute(q):
            out[fmt] = FormatStats(nfiles, nrec or 0, nerr or 0)
        raw = self._kv("stamp_stats")
        if raw:
            out[STAMP_SOURCE] = FormatStats(*json.loads(raw))
        return out

    @property
    @guarded
    def skipped_files(self) -> int:
        return int(self._kv("skipped_files") or 0)

    @guarded
    def _errors(self, note: int) -> list[SourceError]:
        q = "SELECT loc, message, code, hint FROM error WHERE note=? ORDER BY rowid"
        out: list[SourceError] = []
        for loc, msg, code, hint in self.conn().execute(q, (note,)):
            e = (
                RecordParseError(msg, source=loc, hint=hint)
                if code == RecordParseError.code
                else SourceError(msg, source=loc, hint=hint)
            )
            e.code = code
            out.append(e)
        return out

    @property
    def errors(self) -> list[SourceError]:
        return self._errors(0)

    @property
    def notes(self) -> list[SourceError]:
        return self._errors(1)

    @property
    @guarded
    def names(self) -> NameResolver:
        """Initial-form → full-form evidence from records of one paper in two files (replayed from the table)."""
        if self._names is None:
            res = NameResolver()
            for aid, authors in self.conn().execute("SELECT arxiv_id, authors FROM name_evidence ORDER BY n"):
                res.observe(aid, [Author.model_validate(a) for a in json.loads(authors)])
            self._names = res
        return self._names


def _utc_day(t: int) -> date:
    return datetime.fromtimestamp(t, UTC).date()


def _authors_json(authors: Iterable[Author]) -> str:
    return json.dumps([a.model_dump() for a in authors], ensure_ascii=False)


def _parse_paused(args: tuple[str, str, list[tuple[int, int, bytes]]]) -> Parsed:
    """`parse_chunk` with the cyclic garbage collector paused (in the parse worker; the writer pauses it while it
    stores a chunk's rows). A chunk of 1,000 lines allocates dicts, lists and models for each record (none in a
    cycle) and keeps them until it is handed on, so the young collections they trigger walk and promote them
    again and again; paused, each chunk's objects are walked about once, when the pause ends. The whole build:
    11% less CPU at 300k records, 7% at 60k, 5 of 5 interleaved rounds (benchmarks/mirror_build_ab.py)."""
    with gc_paused():
        return parse_chunk(args)


def _gated(items: Iterator[Any], gate: threading.Semaphore, stop: threading.Event) -> Iterator[Any]:
    for item in items:
        gate.acquire()
        if stop.is_set():
            return
        yield item


def _chunks(
    f: BinaryIO, pos: int, lineno: int, fmt: str, where: str, size: int, tail: list[tuple[int, int, bytes]]
) -> Iterator[tuple[str, str, list[tuple[int, int, bytes]]]]:
    """Complete lines from `pos` in chunks of `size`; a last line without newline goes to `tail`."""
    buf: list[tuple[int, int, bytes]] = []
    for line in iter(f.readline, b""):
        if not line.endswith(b"\n"):
            tail.append((lineno + 1, pos, line))
            break
        lineno += 1
        buf.append((lineno, pos, line))
        pos += len(line)
        if len(buf) >= size:
            yield fmt, where, buf
            buf = []
    if buf:
        yield fmt, where, buf


def default_index_path(root: str | Path, directory: str | Path) -> Path:
    """`<directory>/mirror-<name>-<hash of the absolute root>.sqlite`: one index file per mirror."""
    r = Path(root).resolve()
    digest = hashlib.sha1(str(r).encode(), usedforsecurity=False).hexdigest()[:12]
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in r.name)[:40] or "root"
    return Path(directory) / f"mirror-{safe}-{digest}.sqlite"


def env_index_dir() -> Path | None:
    """`ACADEMICEVAL_MIRROR_INDEX_DIR`: where `MirrorSource`/`mirror serve` keep disk indexes when not told."""
    v = os.environ.get("ACADEMICEVAL_MIRROR_INDEX_DIR")
    return Path(v) if v else None


def open_index(
    root: str | Path,
    *,
    index_path: str | Path | None = None,
    index_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> Any:
    """The index readers use (`MirrorSource`, `mirror serve`, collect/update through `open_source`): a `DiskIndex`
    brought up to date when a place is given (`index_path`, `index_dir`, `ACADEMICEVAL_MIRROR_INDEX_DIR`), when
    the workspace (`ACADEMICEVAL_HOME` or ./academiceval-data) already holds one for this mirror (`mirror index`
    made it), or when the mirror is too big for memory (over `IN_MEMORY_MAX_BYTES` of files); else the
    per-process in-memory index (fine up to ~10⁵ records)."""
    from academiceval.sources.mirror.index import load_index

    if index_path is None:
        where = Path(index_dir) if index_dir is not None else env_index_dir()
        if where is None:
            from academiceval.store.workspace import resolve_home

            ws_dir = resolve_home() / "mirror-index"
            if default_index_path(root, ws_dir).exists() or _mirror_bytes(Path(root)) > IN_MEMORY_MAX_BYTES:
                where = ws_dir
        if where is None:
            return load_index(root, progress)
        index_path = default_index_path(root, where)
    idx = DiskIndex(index_path, root)
    idx.update(progress=progress)
    return idx


IN_MEMORY_MAX_BYTES = 256 << 20


def _mirror_bytes(root: Path) -> int:
    """Bytes of the mirror's data files (stops counting past the limit: a huge tree is not walked to the end)."""
    if root.is_file():
        return root.stat().st_size
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for fn in filenames:
            if fn.endswith((".json", ".jsonl")):
                try:
                    total += (Path(dirpath) / fn).stat().st_size
                except OSError:
                    continue
                if total > IN_MEMORY_MAX_BYTES:
                    return total
    return total
