"""`academiceval demo`: the whole chain offline on a local mirror (index → collect → ingest → build → run →
score → report), with progress per stage, a summary table per stage and the report's path at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from academiceval.cli.common import (
    METRIC_SPELLING,
    METRICS_TO_COMPUTE,
    HomeOption,
    at_least_one,
    console,
    fail,
    metric_names,
    progress,
    summary_table,
)


def demo(
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="Local mirror directory (arXiv metadata + PDFs). Default: ../shared/corpus when it exists.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="Also run this model after the baselines (openai/NAME, hf/PATH, baseline/NAME). Repeatable.",
            show_default=False,
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="OpenAI-compatible server for openai/ models (e.g. a local vLLM)."),
    ] = None,
    source: Annotated[
        str,
        typer.Option("--source", help="'mirror' (the --corpus directory, offline) or 'arxiv' (live API, slow)."),
    ] = "mirror",
    seed_author: Annotated[
        list[str] | None,
        typer.Option(
            "--seed-author", help="Seed author for collect (default: chosen from the mirror).", show_default=False
        ),
    ] = None,
    metrics: Annotated[
        list[str] | None,
        typer.Option(
            *METRICS_TO_COMPUTE,
            help="Metrics to compute, comma-separated or repeated as in `score --metrics` " + METRIC_SPELLING + " "
            "(default: rouge-l, plus bertscore when torch is installed). The report ranks by the first.",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", callback=at_least_one, help="Processes for PDF parsing.")] = 2,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="A smaller run: fewer authors and PDFs, title and abstract only, 12 test samples per task+setting.",
        ),
    ] = False,
    home: HomeOption = None,
) -> None:
    """Run the whole benchmark chain on a local mirror and write a leaderboard."""
    from academiceval.demo import StageReport, run_demo
    from academiceval.errors import AcademicEvalError
    from academiceval.store.workspace import resolve_home

    if source not in ("mirror", "arxiv"):
        raise fail(f"--source must be mirror or arxiv, not {source!r}")
    tasks: dict[str, object] = {}

    with progress() as bar:

        def on_progress(stage: str, done: int, total: int | None, detail: str = "") -> None:
            tid = tasks.get(stage)
            if tid is None:
                tid = tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tid, completed=done, total=total, description=f"{stage} {detail[:60]}".strip())

        def on_stage(st: StageReport) -> None:
            rows = [(escape(str(what)), escape(str(value))) for what, value in st.rows]  # '[ctx=8192]' is text
            bar.console.print(summary_table(f"{st.name} ({st.seconds:.1f}s)", ["", ""], rows))
            if st.note:
                bar.console.print(f"[yellow]{st.name}:[/] {st.note}")

        try:
            summary = run_demo(
                corpus,
                home=resolve_home(home),
                models=model or (),
                base_url=base_url,
                workers=workers,
                quick=quick,
                source=source,
                seed_authors=seed_author or (),
                metrics=metric_names(metrics),
                progress=on_progress,
                on_stage=on_stage,
            )
        except AcademicEvalError as e:
            raise fail(e) from e
    console.print(
        summary_table(
            f"demo finished in {summary.wall_s:.1f}s",
            ["stage", "seconds"],
            [(st.name, f"{st.seconds:.1f}") for st in summary.stages],
        )
    )
    from academiceval.report.leaderboard import fmt, task_matrices
    from academiceval.report.results import Results

    # the leaderboard of each round the demo built: the mirror round, then the lab list's private round
    for prefix, results in (("", summary.results_json), ("lab round · ", summary.lab_results_json)):
        if results is None:
            continue
        for m in task_matrices(Results.read(results)):
            console.print(
                summary_table(
                    f"{prefix}{m.task} · {m.metric or 'no metric'} · mean [95% CI]",
                    ["model", *m.settings],
                    [(escape(label), *(fmt(e) for e in ests)) for label, ests in m.rows],
                )
            )
    console.print(f"workspace:   {summary.home}")
    console.print(f"leaderboard: {summary.leaderboard_md}")
    console.print(f"report:      {summary.index_html}")
    if summary.lab_index_html:
        console.print(f"lab round:   {summary.lab_index_html}  (a private round from a publication list)")
