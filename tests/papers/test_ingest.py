"""Content-addressed ingestion: stored by sha256, second run parses nothing, workers agree with one process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from academiceval.papers import errors as E
from academiceval.papers import ingest as ingest_mod
from academiceval.papers.ingest import ingest_file, ingest_paths
from academiceval.papers.parse import sha256_file

REAL = ["1503.02531v1.pdf", "2304.02623v1.pdf"]


@pytest.fixture()
def folder(tmp_path: Path, corpus: Path, pdf_dir: dict[str, Path]) -> Path:
    d = tmp_path / "in" / "nested"
    d.mkdir(parents=True)
    for name in REAL:
        shutil.copy(corpus / "pdf" / name, d / name)
    shutil.copy(pdf_dir["html_not_pdf"], d.parent / "rate_limited.pdf")
    (d / "notes.txt").write_text("not a pdf, ignored by the directory walk")
    return d.parent


def test_second_run_parses_nothing(workspace, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = ingest_paths(workspace, [folder])
    assert [Path(r.path).name for r in first.results] == sorted(["rate_limited.pdf", *REAL])
    assert len(first.ok) == 2 and len(first.failed) == 1 and first.failed[0].code == "html_not_pdf"
    for r in first.ok:
        assert r.paper_id == sha256_file(r.path) and workspace.has_paper(r.paper_id)
    stored = workspace.get_paper_by_arxiv("1503.02531")
    assert stored is not None and stored.title.startswith("Distilling the Knowledge")

    calls: list[str] = []
    real_job = ingest_mod.parse_job

    def counting(path: str, sha: str, max_pages: int):  # type: ignore[no-untyped-def]
        calls.append(path)
        return real_job(path, sha, max_pages)

    monkeypatch.setattr(ingest_mod, "parse_job", counting)
    second = ingest_paths(workspace, [folder])
    assert len(second.skipped) == 2 and not second.ok
    assert calls == [str(folder / "rate_limited.pdf")]  # only the failed file is tried again


def test_interrupted_batch_resumes(workspace, folder: Path) -> None:
    one = sorted(folder.rglob("1503*.pdf"))
    ingest_paths(workspace, one)  # "interrupted" after the first file
    report = ingest_paths(workspace, [folder])
    assert {Path(r.path).name: r.status for r in report.results} == {
        "1503.02531v1.pdf": "skipped",
        "2304.02623v1.pdf": "ok",
        "rate_limited.pdf": "failed",
    }


def test_same_file_under_two_names_is_one_paper(workspace, folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / "renamed.pdf"
    shutil.copy(next(folder.rglob("1503*.pdf")), copy)
    report = ingest_paths(workspace, [next(folder.rglob("1503*.pdf")), copy])
    assert len({r.paper_id for r in report.results}) == 1
    assert sorted(r.status for r in report.results) == ["ok", "skipped"]  # parsed once
    assert workspace.db.execute("SELECT COUNT(*) FROM parsed_paper").fetchone()[0] == 1


def test_workers_match_single_process(tmp_path: Path, folder: Path) -> None:
    from academiceval.store import Workspace

    a, b = Workspace(tmp_path / "a"), Workspace(tmp_path / "b")
    ra = ingest_paths(a, [folder], workers=1)
    rb = ingest_paths(b, [folder], workers=2)
    assert [(r.path, r.status, r.paper_id, r.sections, r.references) for r in ra.results] == [
        (r.path, r.status, r.paper_id, r.sections, r.references) for r in rb.results
    ]
    pa = {p.paper_id: p.model_dump() for p in a.iter_papers()}
    pb = {p.paper_id: p.model_dump() for p in b.iter_papers()}
    assert pa == pb and len(pa) == 2
    a.close()
    b.close()


def test_ingest_file_on_demand(workspace, folder: Path, pdf_dir: dict[str, Path]) -> None:
    path = next(folder.rglob("2304*.pdf"))
    paper = ingest_file(workspace, path)
    assert paper.arxiv_id == "2304.02623" and workspace.has_paper(paper.paper_id)
    assert ingest_file(workspace, path) == paper  # served from the workspace
    with pytest.raises(E.EncryptedPdfError):
        ingest_file(workspace, pdf_dir["encrypted_pdf"])
    assert [e["code"] for e in workspace.ingest_errors()] == ["encrypted_pdf"]


def test_pool_is_capped_at_the_number_of_files(tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ingest -j 16` on 3 files must not fork 16 processes (issue 10, #13)."""
    from academiceval.store import Workspace

    sizes: list[int] = []
    real = ingest_mod.ProcessPoolExecutor

    def recording(max_workers: int, **kw):  # type: ignore[no-untyped-def]
        sizes.append(max_workers)
        return real(max_workers=max_workers, **kw)

    monkeypatch.setattr(ingest_mod, "ProcessPoolExecutor", recording)
    ws = Workspace(tmp_path / "w")
    report = ingest_paths(ws, [folder], workers=16)
    assert sizes == [3] and len(report.results) == 3
    ws.close()
