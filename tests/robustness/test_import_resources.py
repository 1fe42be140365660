"""`academiceval import` on a full disk or a read-only workspace (issue 26, item 10 for `import`).

Before: a disk that filled up during the import ended in a traceback — and not even the right one: SQLite had
already rolled the transaction back, so `upsert_meta`'s own ROLLBACK raised "cannot rollback - no transaction is
active" over the real cause. Now: one line naming the database file and what to do, exit 1 (a failure while
working), and the same command after freeing space gives exactly what an uninterrupted import gives. A read-only
workspace is one line, exit 2.

The real cases run the command as a process on a small tmpfs (needs the right to mount, as root in a container;
skipped otherwise); the portable case fills the database with SQLite's own page limit in-process.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.testing.publists import entries_bib


@pytest.fixture(scope="module")
def real_list(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,000 real listing records as a BibTeX list (~300 kB; its workspace needs ~6 MB)."""
    return entries_bib(corpus, 1000, tmp_path_factory.mktemp("list"))


def snapshot(home: Path) -> dict[str, list[tuple]]:  # type: ignore[type-arg]
    """What an import leaves, without timestamps: metadata, authorship, graph tables."""
    with contextlib.closing(sqlite3.connect(home / "academiceval.sqlite")) as c:
        return {
            "meta": c.execute("SELECT arxiv_id, title, published, json FROM paper_meta ORDER BY 1").fetchall(),
            "authorship": c.execute("SELECT * FROM authorship ORDER BY 1, 2").fetchall(),
            "authors": c.execute("SELECT key, name, state, in_graph FROM graph_author ORDER BY 1").fetchall(),
            "papers": c.execute("SELECT * FROM graph_paper ORDER BY 1").fetchall(),
            "edges": c.execute("SELECT * FROM graph_edge ORDER BY 1, 2").fetchall(),
        }


@pytest.fixture(scope="module")
def reference(real_list: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple]]:  # type: ignore[type-arg]
    home = tmp_path_factory.mktemp("reference")
    res = CliRunner().invoke(app, ["import", str(real_list), "--no-parse", "--home", str(home)])
    assert res.exit_code == 0, res.output
    return snapshot(home)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "COLUMNS": "300", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "academiceval.cli.main", *args], capture_output=True, text=True, env=env, timeout=600
    )


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]


# ---- a real small file system ------------------------------------------------------------------------------------
def _mount(where: Path, options: str) -> bool:
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    return proc.returncode == 0


@contextlib.contextmanager
def tmpfs(size: str) -> Iterator[Path]:
    where = Path("/tmp") / f"academiceval-tmpfs-{uuid.uuid4().hex[:8]}"
    where.mkdir()
    try:
        if not _mount(where, f"size={size}"):
            pytest.skip("cannot mount a tmpfs here (needs root in a container): the portable test covers this")
        try:
            yield where
        finally:
            subprocess.run(["umount", str(where)], capture_output=True)
    finally:
        with contextlib.suppress(OSError):
            where.rmdir()


def remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True, capture_output=True)


@pytest.mark.slow
@pytest.mark.parametrize("size", ["300k", "3m"])  # full while storing the metadata / while writing the graph
def test_disk_full_is_one_line_and_the_rerun_equals_an_uninterrupted_import(
    size: str,
    real_list: Path,
    reference: dict[str, list[tuple]],  # type: ignore[type-arg]
) -> None:
    with tmpfs(size) as fs:
        home = fs / "home"
        first = cli("import", str(real_list), "--no-parse", "--home", str(home))
        errors = error_lines(first)
        assert first.returncode == 1, first.stderr
        (line,) = errors
        assert "the disk is full" in line and str(home / "academiceval.sqlite") in line and "run the same" in line
        remount(fs, "size=64m")  # space freed
        again = cli("import", str(real_list), "--no-parse", "--home", str(home))
        assert again.returncode == 0 and not error_lines(again), again.stderr
        assert snapshot(home) == reference


@pytest.mark.slow
def test_read_only_workspace_is_one_line(real_list: Path) -> None:
    with tmpfs("64m") as fs:
        home = fs / "home"
        assert cli("import", str(real_list), "--no-parse", "--home", str(home)).returncode == 0
        remount(fs, "ro")
        for target in (home, fs / "new-home"):  # an existing workspace; one that cannot even be created
            proc = cli("import", str(real_list), "--no-parse", "--home", str(target))
            (line,) = error_lines(proc)
            assert proc.returncode == 2 and str(target) in line and ("writable" in line or "read-only" in line.lower())


# ---- portable: SQLite's page limit fills the database ------------------------------------------------------------
def test_a_full_database_in_process(real_list: Path, reference, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real_connect = sqlite3.connect

    def small(*args, **kw):  # type: ignore[no-untyped-def]
        conn = real_connect(*args, **kw)
        conn.execute("PRAGMA max_page_count = 300")  # ~1.2 MB: the import needs more
        return conn

    home = tmp_path / "home"
    monkeypatch.setattr(sqlite3, "connect", small)
    res = CliRunner().invoke(app, ["import", str(real_list), "--no-parse", "--home", str(home)])
    assert res.exit_code == 1, res.output
    assert "the disk is full" in res.output and "academiceval.sqlite" in res.output and "Traceback" not in res.output
    monkeypatch.setattr(sqlite3, "connect", real_connect)
    res = CliRunner().invoke(app, ["import", str(real_list), "--no-parse", "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert snapshot(home) == reference
