"""`academiceval ingest PATH...`: parse PDFs into the workspace and print what happened to each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, console, err_console, fail, progress, summary_table


def ingest(
    paths: Annotated[
        list[Path],
        typer.Argument(help="PDF files or directories (searched recursively for *.pdf).", show_default=False),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also write one JSON file per parsed paper (named by arXiv id or sha256)."),
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", "-j", min=1, help="Parse in N worker processes (database writes stay in one).")
    ] = 1,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit non-zero if any file fails (default: only if none succeeded).")
    ] = False,
    max_pages: Annotated[
        int, typer.Option("--max-pages", min=1, help="Reject documents longer than this (books, proceedings).")
    ] = 400,
    executor: Annotated[
        str, typer.Option("--executor", help="local (process pool) or ray (a Ray cluster; extra [ray]).")
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option("--address", help="Ray cluster address (host:port or ray://host:port); default: a local Ray."),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Parse PDFs into structured papers (title, abstract, sections, references, citations).

    Papers are stored by the sha256 of the PDF: files ingested before are served from the workspace.

    An interrupted run resumes where it stopped when you run the same command again.

    Bad files (empty, HTML saved as .pdf, encrypted, scanned, truncated, ...) are recorded with a reason.
    """
    from academiceval.errors import ConfigError
    from academiceval.papers.ingest import IngestResult, find_pdfs, ingest_paths
    from academiceval.store import Workspace

    if executor not in ("local", "ray"):
        raise fail(f"unknown executor {executor!r}: use local or ray")
    if address and executor != "ray":
        raise fail("--address needs --executor ray")
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise fail(f"no such file or directory: {', '.join(map(str, missing))}")
    files = find_pdfs(paths)
    if not files:
        raise fail("no PDF files found under the given paths")
    ws = Workspace(home)
    with progress() as bar:
        task = bar.add_task("ingest", total=len(files))

        def advance(r: IngestResult) -> None:
            bar.update(task, advance=1, description=f"ingest {Path(r.path).name[:40]}")

        try:
            report = ingest_paths(
                ws, files, workers=workers, progress=advance, max_pages=max_pages,
                executor=executor, ray_address=address,
            )  # fmt: skip
        except ConfigError as e:
            raise fail(e) from e
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for r in report.ok + report.skipped:
            paper = ws.get_paper(r.paper_id or "")
            if paper is not None:
                name = (paper.arxiv_id or paper.paper_id).replace("/", "_")
                if paper.arxiv_id and paper.version:
                    name += f"v{paper.version}"
                (out / f"{name}.json").write_text(paper.model_dump_json(indent=1))
    rows = [
        (
            Path(r.path).name,
            {"ok": "[green]ok[/]", "skipped": "[cyan]cached[/]", "failed": "[red]failed[/]"}[r.status],
            r.pages or "",
            r.sections if r.status != "failed" else "",
            r.references if r.status != "failed" else "",
            (r.title[:60] if r.status != "failed" else f"{r.code}: {r.message}" + (f" ({r.hint})" if r.hint else "")),
        )
        for r in report.results
    ]
    console.print(
        summary_table("Ingested papers", ["file", "status", "pages", "sections", "refs", "title / reason"], rows)
    )
    console.print(
        f"[bold]{len(report.ok)} parsed, {len(report.skipped)} cached, {len(report.failed)} failed[/] "
        f"(workspace {ws.home})" + (f"; JSON in {out}" if out else "")
    )
    ws.close()
    if report.succeeded == 0:
        err_console.print("[bold red]error:[/] no file was ingested successfully")
        raise typer.Exit(1)
    if strict and report.failed:
        raise typer.Exit(1)
