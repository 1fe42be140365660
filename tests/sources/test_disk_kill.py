"""`DiskIndex.update` stopped at any point — before any SQL statement of the build, or by a full disk — and run
again gives the same index as an uninterrupted build (issue 26 item 3: marks after data). The build runs on a small
real mirror with every kind of unit: JSON lines in several batches, whole files, PDFs named by id, a PDF known only
by its arXiv stamp, a pre-parsed unarXive paper. `benchmarks/mirror_kill.py` does the same with kill -9 of the
`mirror index` command at random moments and a real full file system."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from academiceval.sources.errors import MirrorIndexError
from academiceval.sources.mirror.disk import DiskIndex
from academiceval.sources.mirror.disk_check import differences, index_content

PDFS = ("2203.00130v1.pdf", "1111.2011v2.pdf", "1706.03762v7.pdf", "0807.3577_JCAP_version.pdf", "Broccoli_Bast.pdf")
BATCH = 40


class Stopped(Exception):
    """Stands for kill -9: raised before the n-th statement, the open transaction is never committed."""


class _StopAt(sqlite3.Connection):
    countdown = -1  # statements left before the stop (class-level: one build at a time)
    seen = 0

    def _tick(self) -> None:
        type(self).seen += 1
        if type(self).countdown == 0:
            type(self).countdown = -1
            raise Stopped
        if type(self).countdown > 0:
            type(self).countdown -= 1

    def execute(self, *a, **kw):  # type: ignore[no-untyped-def,override]
        self._tick()
        return super().execute(*a, **kw)

    def executemany(self, *a, **kw):  # type: ignore[no-untyped-def,override]
        self._tick()
        return super().executemany(*a, **kw)

    def executescript(self, *a, **kw):  # type: ignore[no-untyped-def,override]
        self._tick()
        return super().executescript(*a, **kw)


class StoppableIndex(DiskIndex):
    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.db_path, timeout=60, isolation_level=None, check_same_thread=False, factory=_StopAt)


@pytest.fixture(scope="module")
def small_mirror(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("killmirror")
    meta = corpus / "metadata"
    (root / "kaggle.jsonl").symlink_to(meta / "kaggle_arxiv-metadata-oai-snapshot_first200.jsonl")
    abs_files = sorted((meta / "arxiv_browse_abs").rglob("*.abs"))[:40]
    (root / "abs").mkdir()
    for i, f in enumerate(abs_files):
        (root / "abs" / f"{i:02d}_{f.name}").symlink_to(f)
    (root / "pdf").mkdir()
    for name in PDFS:
        (root / "pdf" / name).symlink_to(corpus / "pdf" / name)
    with (corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl").open("rb") as f:
        (root / "unarxive.jsonl").write_bytes(b"".join(f.readline() for _ in range(2)))
    return root


@pytest.fixture(scope="module")
def reference(small_mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, int]:
    """The uninterrupted build's content, and how many statements it ran."""
    _StopAt.seen, _StopAt.countdown = 0, -1
    idx = StoppableIndex(tmp_path_factory.mktemp("ref") / "i.sqlite", small_mirror, workers=0)
    idx.update(batch=BATCH)
    statements = _StopAt.seen
    content = index_content(idx)
    assert content["pdf"] and content["paper"] and any(r[4] == "pdf-stamp" for r in content["rec"])
    assert len({r[1] for r in content["file"]}) >= 4  # kaggle, abs, pdf, unarxive (and a skipped PDF)
    return content, statements


def test_stopped_before_any_statement_then_rerun_equals_uninterrupted(
    small_mirror: Path, reference: tuple[dict, int], tmp_path: Path
) -> None:
    want, statements = reference
    rng = random.Random(26)
    # every statement of the last 40 (the PDF transaction, the indexes) plus 20 at random before them
    points = sorted({*rng.sample(range(statements - 40), 20), *range(statements - 40, statements)})
    for n, stop in enumerate(points):
        db = tmp_path / f"i{n}.sqlite"
        _StopAt.seen, _StopAt.countdown = 0, stop  # `stop` statements run, the next one never does
        idx = None
        with pytest.raises(Stopped):
            idx = StoppableIndex(db, small_mirror, workers=0)
            idx.update(batch=BATCH)
        if idx is not None:
            idx.close()  # the open transaction dies with the connection, as with kill -9
        again = DiskIndex(db, small_mirror, workers=0)
        again.update(batch=BATCH)
        assert differences(index_content(again), want) == [], f"stopped before statement {stop} of {statements}"
        again.close()


def test_disk_full_stop_then_rerun_equals_uninterrupted(
    small_mirror: Path, reference: tuple[dict, int], tmp_path: Path
) -> None:
    want, _ = reference
    db = tmp_path / "full.sqlite"
    full = DiskIndex(db, small_mirror, workers=0)
    pages = full.conn().execute("PRAGMA page_count").fetchone()[0]
    full.conn().execute(f"PRAGMA max_page_count={pages + 60}")  # SQLITE_FULL, as ENOSPC gives, part way through
    with pytest.raises(MirrorIndexError, match="full") as err:
        full.update(batch=BATCH)
    assert str(db) in (err.value.source or "") and "space" in (err.value.hint or "")
    full.close()
    again = DiskIndex(db, small_mirror, workers=0)
    again.update(batch=BATCH)
    assert differences(index_content(again), want) == []


def test_copying_into_the_workspace_again_changes_nothing(small_mirror: Path, tmp_path: Path) -> None:
    """`mirror index` killed while copying into the workspace copies again over what it stored: the same rows
    (a pre-parsed paper keeps the path it was read from, not the stored record's; benchmarks/mirror_kill.py found
    that one)."""
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store.workspace import Workspace

    ws = Workspace(tmp_path / "home")
    idx = DiskIndex(tmp_path / "i.sqlite", small_mirror, workers=0)
    idx.update(batch=BATCH)

    def rows() -> dict[str, list]:  # every table, without the columns saying when a row was written
        out = {}
        for table in ("parsed_paper", "paper_meta", "authorship", "mirror_pdf", "mirror_error"):
            cols = [
                r[1] for r in ws.db.execute(f"PRAGMA table_info({table})") if r[1] != "at" and not r[1].endswith("_at")
            ]
            out[table] = sorted(map(tuple, ws.db.execute(f"SELECT {', '.join(cols)} FROM {table}")), key=repr)
        return out

    index_mirror(ws, small_mirror, index=idx)
    first = rows()
    assert first["parsed_paper"] and all(r[3] and r[3].startswith(str(small_mirror)) for r in first["parsed_paper"])
    index_mirror(ws, small_mirror, index=idx)
    assert rows() == first
