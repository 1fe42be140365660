"""Batch ingestion: PDFs → parsed papers in the workspace, content-addressed by the PDF's sha256.

A file whose sha256 is already stored (parsed by the current parser version) is skipped without opening it,
so a second run costs one hash per file and an interrupted batch resumes where it stopped. With `workers > 1`
parsing runs in a process pool; every database write happens in the parent, one transaction per paper.
Unusable files are recorded with their typed error (`ws.record_ingest_error`) and the batch goes on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from academiceval.papers.errors import IngestBatchError, PaperError
from academiceval.papers.ingest_ray import connect, run_on_ray
from academiceval.papers.parse import DEFAULT_MAX_PAGES, PARSER_VERSION, parse_job, parse_pdf
from academiceval.store.hashing import sha256_file
from academiceval.store.paper_models import Paper
from academiceval.store.workspace import Workspace

Status = Literal["ok", "skipped", "failed"]


class IngestResult(BaseModel):
    """The outcome for one input file."""

    path: str
    sha256: str = ""
    status: Status
    paper_id: str | None = None
    arxiv_id: str | None = None
    title: str = ""
    pages: int | None = None
    sections: int = 0
    references: int = 0
    code: str | None = None  # error code when failed (see papers/errors.py)
    message: str | None = None
    hint: str | None = None


class IngestReport(BaseModel):
    results: list[IngestResult] = Field(default_factory=list)

    @property
    def ok(self) -> list[IngestResult]:
        return [r for r in self.results if r.status == "ok"]

    @property
    def skipped(self) -> list[IngestResult]:
        return [r for r in self.results if r.status == "skipped"]

    @property
    def failed(self) -> list[IngestResult]:
        return [r for r in self.results if r.status == "failed"]

    @property
    def succeeded(self) -> int:
        """Files now available as parsed papers (freshly parsed or already stored)."""
        return len(self.ok) + len(self.skipped)


def find_pdfs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files as given plus every `*.pdf` below given directories (sorted, duplicates removed)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for p in map(Path, paths):
        found = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() == ".pdf") if p.is_dir() else [p]
        for q in found:
            key = q.resolve()
            if key not in seen:
                seen.add(key)
                out.append(q)
    return out


def _summary(path: Path, sha: str, paper: Paper, status: Status) -> IngestResult:
    return IngestResult(
        path=str(path),
        sha256=sha,
        status=status,
        paper_id=paper.paper_id,
        arxiv_id=paper.arxiv_id,
        title=paper.title,
        pages=paper.pages,
        sections=len(paper.sections),
        references=len(paper.references),
    )


def _store(ws: Workspace, path: str, sha: str, paper: Paper | None, err: dict[str, str | None] | None) -> IngestResult:
    if paper is not None:
        with ws.transaction():
            ws.put_paper(paper, path)
        return _summary(Path(path), sha, paper, "ok")
    assert err is not None
    with ws.transaction():
        ws.record_ingest_error(sha, path, str(err["code"]), str(err["message"]), err.get("hint"))
    return IngestResult(
        path=path, sha256=sha, status="failed", code=err["code"], message=err["message"], hint=err.get("hint")
    )


def ingest_paths(
    ws: Workspace,
    paths: Iterable[str | os.PathLike[str]],
    *,
    workers: int = 1,
    strict: bool = False,
    progress: Callable[[IngestResult], None] | None = None,
    max_pages: int = DEFAULT_MAX_PAGES,
    executor: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
) -> IngestReport:
    """Ingest files and directories (recursively, `*.pdf`). `progress` is called once per file as it
    finishes. With `strict=True`, an `IngestBatchError` is raised after the batch if any file failed
    (everything that could be stored is stored first). `executor="ray"` parses on a Ray cluster
    (`ingest_ray.py`; `ray_address` None = a local Ray with `workers` CPUs) — same stored results."""
    shutdown: Callable[[], None] | None = None
    if executor == "ray":  # connect before any work: a wrong address is a clear error, not a half-done batch
        shutdown = connect(ray_address, num_cpus=max(1, workers))
    try:
        return _ingest(ws, paths, workers, strict, progress, max_pages, executor)
    finally:
        if shutdown is not None:
            shutdown()


def _ingest(
    ws: Workspace,
    paths: Iterable[str | os.PathLike[str]],
    workers: int,
    strict: bool,
    progress: Callable[[IngestResult], None] | None,
    max_pages: int,
    executor: str,
) -> IngestReport:
    files = find_pdfs(paths)
    report = IngestReport()

    def done(r: IngestResult) -> None:
        report.results.append(r)
        if progress is not None:
            progress(r)

    todo: list[tuple[str, str]] = []
    queued: set[str] = set()
    copies: list[tuple[Path, str]] = []  # the same bytes under another name in this batch: parse once
    for f in files:
        try:
            sha = sha256_file(f)
        except OSError as exc:
            done(IngestResult(path=str(f), status="failed", code="unreadable", message=str(exc)))
            continue
        if ws.parser_version(sha) == PARSER_VERSION:
            paper = ws.get_paper(sha)
            if paper is not None:
                done(_summary(f, sha, paper, "skipped"))
                continue
        if sha in queued:
            copies.append((f, sha))
            continue
        queued.add(sha)
        todo.append((str(f), sha))
    outcome: dict[str, IngestResult] = {}
    for r in _run(todo, workers, max_pages, executor):
        res = _store(ws, *r)
        outcome[res.sha256] = res
        done(res)
    for f, sha in copies:
        paper = ws.get_paper(sha)
        first = outcome[sha]
        if paper is not None:
            done(_summary(f, sha, paper, "skipped"))
        else:
            done(first.model_copy(update={"path": str(f)}))
    report.results.sort(key=lambda r: r.path)
    if strict and report.failed:
        first = report.failed[0]
        raise IngestBatchError(
            f"{len(report.failed)} of {len(report.results)} files failed; first: {first.path}: {first.message}",
            hint="run without --strict to keep the good papers and see every reason in the summary",
        )
    return report


def _run(
    todo: list[tuple[str, str]], workers: int, max_pages: int, executor: str = "local"
) -> Iterator[tuple[str, str, Paper | None, dict[str, str | None] | None]]:
    if executor == "ray":
        yield from run_on_ray(todo, max_pages)
        return
    if workers <= 1 or len(todo) <= 1:
        for path, sha in todo:
            yield parse_job(path, sha, max_pages)
        return
    # fork where the platform has it: workers start instantly with everything imported; they only parse and
    # never touch the parent's SQLite connection (all writes happen in the parent)
    method = "fork" if "fork" in get_all_start_methods() else "spawn"
    # never more processes than files: `-j 16` on 2 files forks 2
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=get_context(method)) as pool:
        futures = [pool.submit(parse_job, path, sha, max_pages) for path, sha in todo]
        for fut in as_completed(futures):
            yield fut.result()


def ingest_file(ws: Workspace, path: str | os.PathLike[str], *, max_pages: int = DEFAULT_MAX_PAGES) -> Paper:
    """One PDF on demand (used by the rounds builder): the stored paper if this file was parsed before,
    otherwise parse, store and return it. Raises the typed `PaperError` (after recording it) when the file
    is unusable."""
    sha = sha256_file(path)
    if ws.parser_version(sha) == PARSER_VERSION:
        paper = ws.get_paper(sha)
        if paper is not None:
            return paper
    try:
        paper = parse_pdf(path, max_pages=max_pages, paper_id=sha)
    except PaperError as exc:
        with ws.transaction():
            ws.record_ingest_error(sha, str(path), exc.code, exc.message, exc.hint)
        raise
    with ws.transaction():
        ws.put_paper(paper, str(path))
    return paper
