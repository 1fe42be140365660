"""`academiceval report`: leaderboard (Markdown + static HTML), plots and results.json from saved runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, console, fail, not_negative, summary_table


def report(
    round_name: Annotated[
        str | None, typer.Option("--round", help="Only runs of this round (default: every round found).")
    ] = None,
    runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--runs",
            help="Run directories, or folders searched for them (repeatable). Default: <home>/runs.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output folder. Default: <home>/reports/<round or 'all'>.", show_default=False),
    ] = None,
    after: Annotated[
        str | None,
        typer.Option("--after", help="Only target papers first submitted after this date (YYYY-MM-DD)."),
    ] = None,
    after_cutoff: Annotated[
        str | None,
        typer.Option("--after-cutoff", help="Only papers after this model's knowledge cutoff (model-info table)."),
    ] = None,
    model_info: Annotated[
        str | None, typer.Option("--model-info", help="Extra model-info YAML (release / knowledge-cutoff dates).")
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help="Only samples of this split (e.g. test).")] = None,
    metric: Annotated[
        str | None,
        typer.Option("--metric", help="Rank by this metric (name or prefix, e.g. bertscore). Default: ROUGE-L."),
    ] = None,
    rounds_dir: Annotated[
        Path | None,
        typer.Option("--rounds-dir", help="Where exported rounds live (for references). Default: <home>/rounds."),
    ] = None,
    examples: Annotated[
        int, typer.Option("--examples", callback=not_negative, help="Example samples per task on the examples page.")
    ] = 3,
    home: HomeOption = None,
) -> None:
    """Build the leaderboard from saved run and score records (no model is called, nothing is re-scored)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.report.render import make_report
    from academiceval.report.window import resolve_window
    from academiceval.store.workspace import resolve_home

    h = resolve_home(home)
    try:
        after_date, reason = resolve_window(after, after_cutoff, model_info=model_info)
        sources = runs or [h / "runs"]
        out_dir = out or h / "reports" / (round_name or "all")
        paths = make_report(
            sources,
            out_dir,
            round_name=round_name,
            after=after_date,
            after_reason=reason,
            split=split,
            prefer_metric=metric,
            rounds_dir=rounds_dir or (h / "rounds" if (h / "rounds").is_dir() else None),
            examples_per_task=examples,
        )
    except AcademicEvalError as e:
        raise fail(str(e)) from e
    res = paths.results
    assert res is not None
    rows = [
        (
            r.label,
            r.task,
            r.setting,
            r.counts.samples,
            r.counts.errors,
            ", ".join(f"{k}={m.main.mean:.3f}" for k, m in r.metrics.items() if m.main.mean is not None) or "—",
        )
        for r in res.rows
    ]
    console.print(summary_table("report", ["model", "task", "setting", "n", "errors", "means"], rows))
    for p in res.problems[:10]:
        console.print(f"[yellow]problem:[/] {p}")
    console.print(f"leaderboard: {paths.leaderboard_md}")
    console.print(f"HTML:        {paths.index_html}")
    console.print(f"results:     {paths.results_json}")
