"""A workspace database that is not a database (issue 10, finding 3): `ingest`, `build` and `mirror index`
used to die with raw `sqlite3.DatabaseError` tracebacks. Now: one line naming the file and what to do,
exit status 2, and the file is left as it was (the user decides whether to restore or rebuild)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from academiceval.cli.main import main

KAGGLE = "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"
DAMAGE = ["garbage", "header", "truncated", "pages", "zero-length-wal-garbage"]


@pytest.fixture(scope="module")
def good_db(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("ws"))
    index_mirror(ws, corpus / KAGGLE)
    ws.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    ws.close()
    return ws.db_path


def damaged(good: Path, home: Path, how: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    db = home / good.name
    data = good.read_bytes()
    page = int.from_bytes(data[16:18], "big") or 65536
    if how == "garbage":
        db.write_bytes(os.urandom(len(data)))
    elif how == "header":
        db.write_bytes(b"\x00" * 100 + data[100:])
    elif how == "truncated":
        db.write_bytes(data[: len(data) // 2])
    elif how == "pages":  # page 1 (schema) intact, every other page garbage
        db.write_bytes(data[:page] + os.urandom(len(data) - page))
    elif how == "zero-length-wal-garbage":
        db.write_bytes(data)
        Path(f"{db}-wal").write_bytes(os.urandom(5000))
    return db


def cli(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["academiceval", *args])
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out + out.err


COMMANDS = {
    "mirror index": lambda c, h: ["mirror", "index", str(c / KAGGLE), "--home", str(h)],
    "ingest": lambda c, h: ["ingest", str(next(iter(sorted((c / "pdf").glob("*.pdf"))))), "--home", str(h)],
    "build": lambda c, h: ["build", "--round", "r1", "--home", str(h)],
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("how", DAMAGE)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_damaged_workspace_db_is_one_line(good_db, corpus, tmp_path, monkeypatch, capsys, command, how) -> None:
    home = tmp_path / "ws"
    db = damaged(good_db, home, how)
    before = db.read_bytes()
    code, out = cli(monkeypatch, capsys, *COMMANDS[command](corpus, home))
    assert "Traceback" not in out and "DatabaseError" not in out.replace("unusable (", ""), out
    if code == 0:  # SQLite could still read what this command needed (e.g. a truncated tail it never touched)
        return
    errors = [ln for ln in out.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, out
    if "workspace database" in errors[0]:
        assert code == 2 and str(db) in errors[0] and "restore a backup" in errors[0]
        assert db.read_bytes() == before or how == "zero-length-wal-garbage"  # never "repaired" behind the user's back


def test_a_directory_where_the_database_belongs(tmp_path, monkeypatch, capsys) -> None:
    home = tmp_path / "ws"
    (home / "academiceval.sqlite").mkdir(parents=True)
    code, out = cli(monkeypatch, capsys, "build", "--round", "r1", "--home", str(home))
    assert code == 2 and "Traceback" not in out and "writable file" in out, out
    shutil.rmtree(home)


def test_a_busy_database_is_not_called_damaged(tmp_path) -> None:
    """Only a file that is itself the problem gets the "restore a backup" advice; a lock is raised as it is."""
    import sqlite3

    from academiceval.store.workspace import damaged_database, is_unusable

    assert not is_unusable(sqlite3.OperationalError("database is locked"))
    assert is_unusable(sqlite3.DatabaseError("file is not a database"))
    assert is_unusable(sqlite3.DatabaseError("database disk image is malformed"))
    msg = str(damaged_database(tmp_path / "academiceval.sqlite", sqlite3.DatabaseError("file is not a database")))
    assert "\n" not in msg and "academiceval.sqlite" in msg and "restore a backup" in msg
