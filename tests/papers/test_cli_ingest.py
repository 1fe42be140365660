"""`academiceval ingest`: summary table, JSON export, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.papers import Paper

runner = CliRunner()


def test_ingest_command_end_to_end(tmp_path: Path, corpus: Path, pdf_dir: dict[str, Path]) -> None:
    src = tmp_path / "pdfs"
    src.mkdir()
    shutil.copy(corpus / "pdf" / "1503.02531v1.pdf", src)
    shutil.copy(pdf_dir["empty_file"], src / "empty.pdf")
    home, out = tmp_path / "home", tmp_path / "json"
    res = runner.invoke(app, ["ingest", str(src), "--home", str(home), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "1 parsed, 0 cached, 1 failed" in res.output
    assert "empty_file" in res.output
    files = list(out.glob("*.json"))
    assert [f.name for f in files] == ["1503.02531v1.json"]
    paper = Paper.model_validate(json.loads(files[0].read_text()))
    assert paper.title.startswith("Distilling") and paper.references

    again = runner.invoke(app, ["ingest", str(src), "--home", str(home)])
    assert again.exit_code == 0 and "0 parsed, 1 cached, 1 failed" in again.output
    strict = runner.invoke(app, ["ingest", str(src), "--home", str(home), "--strict"])
    assert strict.exit_code == 1


def test_ingest_exit_code_when_nothing_succeeds(tmp_path: Path, pdf_dir: dict[str, Path]) -> None:
    res = runner.invoke(
        app, ["ingest", str(pdf_dir["encrypted_pdf"]), str(pdf_dir["html_not_pdf"]), "--home", str(tmp_path / "h")]
    )
    assert res.exit_code == 1
    assert "encrypted_pdf" in res.output and "html_not_pdf" in res.output


def test_ingest_help_and_missing_path(tmp_path: Path) -> None:
    res = runner.invoke(app, ["ingest", "--help"])
    assert res.exit_code == 0
    for opt in ("--out", "--workers", "--strict", "--home", "--max-pages"):
        assert opt in res.output
    missing = runner.invoke(app, ["ingest", str(tmp_path / "nope"), "--home", str(tmp_path / "h")])
    assert missing.exit_code == 2
