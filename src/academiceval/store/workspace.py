"""The embedded workspace: one directory holding a SQLite database (WAL mode) and the files stages write.

Under the workspace home: `academiceval.sqlite` (papers' metadata, authorship, parsed papers, errors, graph,
...) and the files laid out by `store.artifacts` (pdf/, rounds/NAME/, runs/ROUND/RUN/, reports/NAME/, cache/).

Stages own their tables: each declares its DDL with `register_schema(name, ddl)` at import time and the
workspace creates every registered schema on connect (all statements are `CREATE ... IF NOT EXISTS`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

from academiceval.errors import ConfigError
from academiceval.store.artifacts import Layout
from academiceval.store.paper_models import Paper, PaperMeta

ENV_HOME = "ACADEMICEVAL_HOME"
DEFAULT_HOME = "academiceval-data"
DB_NAME = "academiceval.sqlite"

_SCHEMAS: dict[str, str] = {}

CORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS paper_meta (
    arxiv_id TEXT PRIMARY KEY,
    version INTEGER,
    title TEXT NOT NULL,
    published TEXT NOT NULL,             -- v1 date, ISO
    primary_category TEXT,
    source TEXT NOT NULL,
    json TEXT NOT NULL,                  -- PaperMeta as JSON
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS paper_meta_published ON paper_meta(published);
CREATE INDEX IF NOT EXISTS paper_meta_category ON paper_meta(primary_category);
CREATE TABLE IF NOT EXISTS authorship (
    arxiv_id TEXT NOT NULL,
    position INTEGER NOT NULL,           -- 0 = first author
    author_key TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (arxiv_id, position)
);
CREATE INDEX IF NOT EXISTS authorship_author ON authorship(author_key);
CREATE TABLE IF NOT EXISTS parsed_paper (
    paper_id TEXT PRIMARY KEY,           -- sha256 of the PDF, or "<source>:<id>" for pre-parsed papers
    arxiv_id TEXT,
    source TEXT NOT NULL,
    path TEXT,                           -- where the input was read from (informational)
    parser_version TEXT NOT NULL,
    json TEXT NOT NULL,                  -- Paper as JSON
    parsed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS parsed_paper_arxiv ON parsed_paper(arxiv_id);
CREATE TABLE IF NOT EXISTS ingest_error (
    sha256 TEXT NOT NULL,
    path TEXT NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    hint TEXT,
    at TEXT NOT NULL,
    PRIMARY KEY (sha256, path)
);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, json TEXT NOT NULL);
"""


def register_schema(name: str, ddl: str) -> None:
    """Declare a stage's tables; created on every connect (idempotent DDL only)."""
    _SCHEMAS[name] = ddl


register_schema("core", CORE_SCHEMA)


# ---- core-table reads for stages that keep their own tables beside them (the graph) ------------------------------
# Module functions over a connection, because those stages work inside their own transactions; the SQL on
# `paper_meta` and `authorship` stays here, with the tables' owner.
_CHUNK = 500


def _chunks(values: Iterable[str]) -> Iterator[list[str]]:
    vals = list(dict.fromkeys(values))
    for i in range(0, len(vals), _CHUNK):
        yield vals[i : i + _CHUNK]


def authors_by_paper(conn: sqlite3.Connection, arxiv_ids: Iterable[str]) -> dict[str, list[str]]:
    """The author keys of each given paper, in author order (papers without authorship rows are absent)."""
    out: dict[str, list[str]] = {}
    for chunk in _chunks(arxiv_ids):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT arxiv_id, author_key FROM authorship WHERE arxiv_id IN ({marks}) ORDER BY arxiv_id, position"
        for aid, key in conn.execute(sql, chunk):
            out.setdefault(aid, []).append(key)
    return out


def first_authored(conn: sqlite3.Connection, author_keys: Iterable[str]) -> list[tuple[str, str, str]]:
    """(arxiv_id, author_key, published) of every paper with metadata whose first author is one of the keys."""
    out: list[tuple[str, str, str]] = []
    for chunk in _chunks(author_keys):
        marks = ",".join("?" * len(chunk))
        out += conn.execute(
            f"""SELECT a.arxiv_id, a.author_key, p.published FROM authorship a JOIN paper_meta p
                ON p.arxiv_id=a.arxiv_id WHERE a.position=0 AND a.author_key IN ({marks})""",
            chunk,
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in out]


def coauthor_counts(conn: sqlite3.Connection, author_keys: Sequence[str]) -> dict[str, int]:
    """For every other author on a paper of the given authors: on how many such (paper, given author) rows."""
    own = list(author_keys)
    if not own:
        return {}
    marks = ",".join("?" * len(own))
    rows = conn.execute(
        f"""SELECT b.author_key, COUNT(*) FROM authorship a JOIN authorship b ON a.arxiv_id=b.arxiv_id
            WHERE a.author_key IN ({marks}) AND b.author_key NOT IN ({marks}) GROUP BY b.author_key""",
        (*own, *own),
    )
    return {r[0]: int(r[1]) for r in rows}


def latest_published_by_author(conn: sqlite3.Connection, author_keys: Iterable[str]) -> dict[str, str]:
    """The newest v1 date (ISO) of any paper (any author position) of each author that has one."""
    out: dict[str, str] = {}
    for chunk in _chunks(author_keys):
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"""SELECT s.author_key, MAX(m.published) FROM authorship s JOIN paper_meta m ON m.arxiv_id=s.arxiv_id
                WHERE s.author_key IN ({marks}) GROUP BY s.author_key""",
            chunk,
        )
        out.update((r[0], r[1]) for r in rows if r[1] is not None)
    return out


def categories_of(conn: sqlite3.Connection, arxiv_ids: Iterable[str]) -> set[str]:
    """Every category (primary or cross-list) of the given papers' metadata."""
    out: set[str] = set()
    for chunk in _chunks(arxiv_ids):
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"""SELECT DISTINCT c.value FROM paper_meta m, json_each(m.json, '$.categories') c
                WHERE m.arxiv_id IN ({marks})""",
            chunk,
        )
        out.update(r[0] for r in rows if r[0])
    return out


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """Option beats environment beats default (`./academiceval-data`). A path that exists and is not a directory
    is refused here, once for every command (before: a traceback from whichever write came first)."""
    if home is not None:
        path = Path(home)
    else:
        env = os.environ.get(ENV_HOME)
        path = Path(env) if env else Path(DEFAULT_HOME)
    if path.exists() and not path.is_dir():
        raise ConfigError(
            "the workspace must be a directory, and this is a file",
            source=str(path),
            hint="give --home (or $ACADEMICEVAL_HOME) a directory, or move the file aside",
        )
    return path


class WorkspaceDatabaseError(ConfigError):
    """The workspace database cannot be used: not an SQLite file, damaged pages, or a path that cannot be opened."""

    code = "workspace_database"


def is_unusable(error: sqlite3.Error) -> bool:
    """The file itself is the problem (not SQLite, damaged, cannot be opened) — not a busy or locked database."""
    if not isinstance(error, sqlite3.DatabaseError) or isinstance(
        error, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError
    ):
        return False
    if isinstance(error, sqlite3.OperationalError):
        text = str(error).lower()
        return any(m in text for m in ("malformed", "not a database", "unable to open", "corrupt"))
    return True


def damaged_database(path: Path, error: sqlite3.Error) -> WorkspaceDatabaseError:
    """The one message for a workspace database that SQLite refuses (on connect, or later on a damaged page)."""
    if isinstance(error, sqlite3.OperationalError) and "unable to open" in str(error):
        hint = "check that the path is a writable file and its directory exists"
    else:
        hint = (
            f"move it aside (mv {path.name} {path.name}.bad) and restore a backup, or rebuild the workspace "
            "with mirror/collect and ingest; run `sqlite3 FILE 'PRAGMA integrity_check'` to see the damage"
        )
    return WorkspaceDatabaseError(f"the workspace database is unusable ({error})", source=str(path), hint=hint)


class Workspace:
    """Handle on a workspace directory. Cheap to create; one SQLite connection per thread."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.home = resolve_home(home).resolve()
        self.home.mkdir(parents=True, exist_ok=True)
        self.db_path = self.home / DB_NAME
        self.layout = Layout(self.home)
        self._local = threading.local()

    # ---- directories (created on first use; their names belong to store.artifacts) -------------
    @property
    def pdf_dir(self) -> Path:
        return Layout.ensure(self.layout.pdf_dir)

    @property
    def rounds_dir(self) -> Path:
        return Layout.ensure(self.layout.rounds_dir)

    @property
    def runs_dir(self) -> Path:
        return Layout.ensure(self.layout.runs_dir)

    @property
    def reports_dir(self) -> Path:
        return Layout.ensure(self.layout.reports_dir)

    # ---- database -------------------------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        try:
            if conn is None:
                conn = sqlite3.connect(self.db_path, timeout=60, isolation_level=None, check_same_thread=False)
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute("PRAGMA busy_timeout=60000")
                self._local.conn = conn
                self._local.applied = set()
            if len(self._local.applied) != len(_SCHEMAS):
                # A stage imported after this connection opened registered its tables late: create them now.
                for name, ddl in list(_SCHEMAS.items()):
                    if name not in self._local.applied:
                        conn.executescript(ddl)
                        self._local.applied.add(name)
        except sqlite3.DatabaseError as e:  # not a database / damaged: one line naming the file, never a traceback
            if not is_unusable(e):  # e.g. "database is locked": not the file's fault, never "restore a backup"
                raise
            raise damaged_database(self.db_path, e) from None
        return conn

    def ensure_schema(self, ddl: str) -> None:
        self.db.executescript(ddl)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic unit of work: committed entirely or not at all (survives kill -9)."""
        conn = self.db
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:  # SQLite already rolled back after SQLITE_FULL/IOERR: keep that error visible
                conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ---- paper metadata -------------------------------------------------------------------------
    def upsert_meta(self, metas: Iterable[PaperMeta], conn: sqlite3.Connection | None = None) -> int:
        """Insert or replace metadata and authorship rows. Keeps the higher version when both are known."""
        own = conn is None
        c = self.db if conn is None else conn
        n = 0
        if own:
            c.execute("BEGIN IMMEDIATE")
        try:
            for m in metas:
                row = c.execute("SELECT version FROM paper_meta WHERE arxiv_id=?", (m.arxiv_id,)).fetchone()
                if row is not None and row["version"] and m.version and row["version"] > m.version:
                    continue
                c.execute(
                    "INSERT OR REPLACE INTO paper_meta VALUES (?,?,?,?,?,?,?,?)",
                    (
                        m.arxiv_id,
                        m.version,
                        m.title,
                        m.published.isoformat(),
                        m.primary_category,
                        m.source,
                        m.model_dump_json(),
                        now_iso(),
                    ),
                )
                c.execute("DELETE FROM authorship WHERE arxiv_id=?", (m.arxiv_id,))
                c.executemany(
                    "INSERT INTO authorship VALUES (?,?,?,?)",
                    [(m.arxiv_id, i, a.key or a.name, a.name) for i, a in enumerate(m.authors)],
                )
                n += 1
            if own:
                c.execute("COMMIT")
        except BaseException:
            if own and c.in_transaction:  # not after SQLite's own rollback (disk full): the cause stays the error
                c.execute("ROLLBACK")
            raise
        return n

    def get_meta(self, arxiv_id: str) -> PaperMeta | None:
        row = self.db.execute("SELECT json FROM paper_meta WHERE arxiv_id=?", (arxiv_id,)).fetchone()
        return PaperMeta.model_validate_json(row["json"]) if row else None

    def iter_meta(self, where: str = "", params: tuple[object, ...] = ()) -> Iterator[PaperMeta]:
        """All metadata, oldest first (by v1 date, then id). `where` is an SQL condition on paper_meta."""
        sql = "SELECT json FROM paper_meta" + (f" WHERE {where}" if where else "") + " ORDER BY published, arxiv_id"
        for row in self.db.execute(sql, params):
            yield PaperMeta.model_validate_json(row["json"])

    def meta_ids(self, *, since: date | None = None) -> list[str]:
        """Versionless ids of all metadata (submitted on/after `since`), oldest first (by v1 date, then id)."""
        where, params = ("WHERE published >= ?", (since.isoformat(),)) if since else ("", ())
        return [
            r[0]
            for r in self.db.execute(f"SELECT arxiv_id FROM paper_meta {where} ORDER BY published, arxiv_id", params)
        ]

    def sources_of(self, arxiv_ids: Iterable[str]) -> dict[str, str]:
        """The `source` of each stored paper's metadata (which record it came from: its standing), by id."""
        ids = list(arxiv_ids)
        out: dict[str, str] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            sql = f"SELECT arxiv_id, source FROM paper_meta WHERE arxiv_id IN ({','.join('?' * len(chunk))})"
            out.update((r[0], r[1]) for r in self.db.execute(sql, chunk))
        return out

    def delete_meta(self, arxiv_id: str, conn: sqlite3.Connection | None = None) -> None:
        """Forget a paper's metadata and authorship (before a record of higher standing replaces it whole, which
        `upsert_meta` alone would refuse when the stored version is higher)."""
        c = self.db if conn is None else conn
        c.execute("DELETE FROM paper_meta WHERE arxiv_id=?", (arxiv_id,))
        c.execute("DELETE FROM authorship WHERE arxiv_id=?", (arxiv_id,))

    def first_author_names(self, arxiv_ids: Collection[str]) -> list[str]:
        """Distinct names of the first authors of the given papers, most recent paper first (then by id)."""
        wanted = set(arxiv_ids)
        rows = self.db.execute(
            """SELECT a.arxiv_id, a.name FROM authorship a JOIN paper_meta m ON m.arxiv_id = a.arxiv_id
               WHERE a.position = 0 ORDER BY m.published DESC, m.arxiv_id"""
        )
        return list(dict.fromkeys(name for aid, name in rows if aid in wanted))

    def ids_published_before(
        self, before: date, *, category: str | None = None, archive: str | None = None
    ) -> list[str]:
        """Versionless ids of the papers submitted before `before`, in id order; only those whose primary category
        is `category`, or lies in the archive `archive` (`cs` for cs.CL, cs.LG, …), when given."""
        where, params = "published<?", [before.isoformat()]
        if category is not None:
            where, params = where + " AND primary_category=?", [*params, category]
        if archive is not None:
            where, params = where + " AND primary_category LIKE ?", [*params, f"{archive}.%"]
        return [
            r[0] for r in self.db.execute(f"SELECT arxiv_id FROM paper_meta WHERE {where} ORDER BY arxiv_id", params)
        ]

    def count_meta(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM paper_meta").fetchone()[0])

    def published_of(self, arxiv_id: str) -> str | None:
        """The stored v1 date of a paper (ISO), or None when it has no metadata."""
        row = self.db.execute("SELECT published FROM paper_meta WHERE arxiv_id=?", (arxiv_id,)).fetchone()
        return None if row is None else row[0]

    def authors_of(self, arxiv_id: str) -> list[str]:
        """The author keys of a paper, as stored (`authorship`)."""
        return [r[0] for r in self.db.execute("SELECT author_key FROM authorship WHERE arxiv_id=?", (arxiv_id,))]

    def papers_of_author(self, author_key: str, *, first_only: bool = False) -> list[str]:
        sql = "SELECT arxiv_id FROM authorship WHERE author_key=?" + (" AND position=0" if first_only else "")
        return [r[0] for r in self.db.execute(sql, (author_key,))]

    # ---- parsed papers --------------------------------------------------------------------------
    def has_paper(self, paper_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM parsed_paper WHERE paper_id=?", (paper_id,)).fetchone() is not None

    def parser_version(self, paper_id: str) -> str | None:
        """The parser version a stored paper was parsed with (None: not stored), so ingest re-parses old ones."""
        row = self.db.execute("SELECT parser_version FROM parsed_paper WHERE paper_id=?", (paper_id,)).fetchone()
        return row["parser_version"] if row else None

    def put_paper(self, paper: Paper, path: str | None = None) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO parsed_paper VALUES (?,?,?,?,?,?,?)",
            (
                paper.paper_id,
                paper.arxiv_id,
                paper.source,
                path,
                paper.parser_version,
                paper.model_dump_json(),
                now_iso(),
            ),
        )
        self.db.execute("DELETE FROM ingest_error WHERE sha256=?", (paper.paper_id,))

    def get_paper(self, paper_id: str) -> Paper | None:
        row = self.db.execute("SELECT json FROM parsed_paper WHERE paper_id=?", (paper_id,)).fetchone()
        return Paper.model_validate_json(row["json"]) if row else None

    def get_paper_by_arxiv(self, arxiv_id: str) -> Paper | None:
        """The parsed paper for a versionless arXiv id; PDF-parsed papers win over pre-parsed ones."""
        row = self.db.execute(
            "SELECT json FROM parsed_paper WHERE arxiv_id=? ORDER BY (source='pdf') DESC, parsed_at DESC LIMIT 1",
            (arxiv_id,),
        ).fetchone()
        return Paper.model_validate_json(row["json"]) if row else None

    def papers_by_arxiv(self, arxiv_id: str) -> list[Paper]:
        """Every parsed text of a versionless arXiv id (a PDF of one version, a pre-parsed object of another, ...),
        in `get_paper_by_arxiv`'s order of preference."""
        rows = self.db.execute(
            "SELECT json FROM parsed_paper WHERE arxiv_id=? ORDER BY (source='pdf') DESC, parsed_at DESC",
            (arxiv_id,),
        ).fetchall()
        return [Paper.model_validate_json(r["json"]) for r in rows]

    def count_papers_without_meta(self) -> int:
        """Parsed papers that no metadata row describes (no v1 date: they cannot become samples)."""
        row = self.db.execute(
            "SELECT COUNT(DISTINCT COALESCE(arxiv_id, paper_id)) FROM parsed_paper "
            "WHERE arxiv_id IS NULL OR arxiv_id NOT IN (SELECT arxiv_id FROM paper_meta)"
        ).fetchone()
        return int(row[0])

    def parsed_arxiv_ids(self) -> set[str]:
        """arXiv ids that have a parsed text in the workspace."""
        return {r[0] for r in self.db.execute("SELECT DISTINCT arxiv_id FROM parsed_paper WHERE arxiv_id IS NOT NULL")}

    def iter_papers(self) -> Iterator[Paper]:
        for row in self.db.execute("SELECT json FROM parsed_paper ORDER BY paper_id"):
            yield Paper.model_validate_json(row["json"])

    # ---- recorded errors ------------------------------------------------------------------------
    def record_ingest_error(self, sha256: str, path: str, code: str, message: str, hint: str | None) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO ingest_error VALUES (?,?,?,?,?,?)", (sha256, path, code, message, hint, now_iso())
        )

    def ingest_errors(self) -> list[dict[str, str]]:
        return [dict(r) for r in self.db.execute("SELECT * FROM ingest_error ORDER BY at, path")]

    # ---- small key/value documents (options of the last build, cursors, ...) --------------------
    def put_doc(self, key: str, value: object) -> None:
        self.db.execute("INSERT OR REPLACE INTO kv VALUES (?,?)", (key, json.dumps(value, default=str)))

    def get_doc(self, key: str) -> object | None:
        row = self.db.execute("SELECT json FROM kv WHERE key=?", (key,)).fetchone()
        return json.loads(row["json"]) if row else None
