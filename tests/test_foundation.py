"""The package installs, the CLI answers, the workspace persists across handles."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import date

from academiceval.store import Workspace
from academiceval.store.paper_models import Author, Paper, PaperMeta, Section, SectionRole


def test_cli_help_lists_every_stage() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "academiceval.cli.main", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for cmd in ("ingest", "mirror", "collect", "update", "build", "stats", "run", "score", "report", "demo"):
        assert cmd in out


def test_workspace_is_wal_and_persists(tmp_path) -> None:
    ws = Workspace(tmp_path / "w")
    meta = PaperMeta(
        arxiv_id="2101.00001",
        version=2,
        title="T",
        published=date(2021, 1, 1),
        authors=[Author(name="Jane Doe", key="jane doe")],
    )
    ws.upsert_meta([meta])
    ws.upsert_meta([meta.model_copy(update={"version": 1, "title": "older"})])  # an older version never wins
    ws.close()
    mode = sqlite3.connect(tmp_path / "w" / "academiceval.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    again = Workspace(tmp_path / "w")
    got = again.get_meta("2101.00001")
    assert got is not None and got.title == "T" and got.version == 2
    assert again.papers_of_author("jane doe", first_only=True) == ["2101.00001"]


def test_workspace_home_from_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ACADEMICEVAL_HOME", str(tmp_path / "env-home"))
    assert Workspace().home == (tmp_path / "env-home").resolve()
    assert Workspace(tmp_path / "opt").home == (tmp_path / "opt").resolve()


def test_body_views_drop_roles_and_back_matter() -> None:
    p = Paper(
        paper_id="x",
        sections=[
            Section(heading="Introduction", number="1", role=SectionRole.introduction, text="intro text"),
            Section(heading="Related Work", number="2", role=SectionRole.related_work, text="rw text"),
            Section(heading="Conclusion", number="3", role=SectionRole.conclusion, text="concl text"),
            Section(heading="References", role=SectionRole.references, text="[1] A ref"),
            Section(heading="Proofs", number="A", role=SectionRole.appendix, text="appendix text"),
        ],
    )
    full = p.body()
    assert "intro text" in full and "concl text" in full
    assert "A ref" not in full and "appendix text" not in full
    assert "concl text" not in p.body(without=SectionRole.conclusion)
    assert "rw text" not in p.body(without="related_work")
    assert p.section_text("introduction") == "intro text"


def test_schema_registered_after_connect_is_created(tmp_path) -> None:
    from academiceval.store.workspace import _SCHEMAS, register_schema

    ws = Workspace(tmp_path / "late")
    ws.db.execute("SELECT COUNT(*) FROM paper_meta")  # connection open before the late stage registers
    register_schema("late-test", "CREATE TABLE IF NOT EXISTS late_stage (x INTEGER)")
    try:
        assert ws.db.execute("SELECT COUNT(*) FROM late_stage").fetchone()[0] == 0
    finally:
        _SCHEMAS.pop("late-test")
