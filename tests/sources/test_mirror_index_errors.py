"""A damaged mirror index is blamed on the mirror index — its file, with the hint to delete and rebuild it — and
never on the healthy workspace database (issue 26 item 10); both through the command and the console entry point."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app

KAGGLE = "metadata/kaggle_arxiv-metadata-oai-snapshot_first200.jsonl"


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "not-sqlite":
        path.write_bytes(b"this is not an SQLite file\n" * 200)
    else:  # keep the header, wipe the pages after the first two: "database disk image is malformed"
        page = int.from_bytes(data[16:18], "big") or 65536
        data[2 * page :] = b"\x00" * (len(data) - 2 * page)
        path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["not-sqlite", "wiped-pages"])
def test_a_damaged_mirror_index_is_named_as_such(corpus: Path, tmp_path: Path, how: str) -> None:
    mirror, home = tmp_path / "m", tmp_path / "home"
    mirror.mkdir()
    (mirror / "k.jsonl").symlink_to(corpus / KAGGLE)
    runner = CliRunner()
    res = runner.invoke(app, ["mirror", "index", str(mirror), "--home", str(home)])
    assert res.exit_code == 0, res.output
    (index,) = (home / "mirror-index").glob("*.sqlite")
    with sqlite3.connect(index) as c:  # everything into the main file, so that damaging it damages the index
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _damage(index, how)
    env = {**os.environ, "COLUMNS": "400"}
    for argv in (["mirror", "index", str(mirror)], ["mirror", "serve", str(mirror), "--port", "0"]):
        proc = subprocess.run(
            [sys.executable, "-m", "academiceval.cli.main", *argv, "--home", str(home)],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        err = " ".join(proc.stderr.split())
        assert proc.returncode == 2, (argv, proc.stderr)
        assert "mirror index is unusable" in err and index.name in err and "delete" in err, err
        assert "workspace database" not in err and "Traceback" not in err, err
    assert (home / "academiceval.sqlite").exists()  # the workspace database was not blamed, moved or touched
