"""`academiceval compare RUN_A RUN_B`: paired verdicts of two runs on the samples both scored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from academiceval.cli.common import (
    METRIC_SPELLING,
    METRIC_TO_SHOW,
    HomeOption,
    console,
    fail,
    metric_names,
    summary_table,
)
from academiceval.report.paired import fmt_diff


def _run_path(ref: str, layout: Any) -> Path:
    """A run directory given as a path, or as ROUND/RUN under <home>/runs (`Layout.find_run`)."""
    from academiceval.errors import AcademicEvalError
    from academiceval.store.artifacts import RUN_SPEC

    try:
        p = layout.find_run(ref)
    except AcademicEvalError as e:
        raise fail(e) from None
    if not (p / RUN_SPEC).is_file():
        raise fail(f"{ref}: not a run directory (no {RUN_SPEC}); give one run, as a path or ROUND/RUN")
    return p


def _fmt(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "—"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def compare(
    run_a: Annotated[str, typer.Argument(help="Run A: a run directory, or ROUND/RUN under <home>/runs.")],
    run_b: Annotated[str, typer.Argument(help="Run B (compared on the samples both runs scored).")],
    metric: Annotated[
        list[str] | None,
        typer.Option(
            *METRIC_TO_SHOW,
            help="Show only metrics with this name or prefix, comma-separated or repeated " + METRIC_SPELLING + ".",
        ),
    ] = None,
    after: Annotated[
        str | None, typer.Option("--after", help="Only target papers first submitted after this date (YYYY-MM-DD).")
    ] = None,
    split: Annotated[str | None, typer.Option("--split", help="Only samples of this split.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
    home: HomeOption = None,
) -> None:
    """A − B per task × setting × metric over the shared samples: one paired permutation test gives the verdict and
    its interval (significant exactly when the interval excludes 0); below 10 shared samples, the mean only."""
    from academiceval.errors import AcademicEvalError
    from academiceval.scores.paired import TEST, compare_scores
    from academiceval.scores.windows import resolve_window
    from academiceval.store.artifacts import Layout, load_run
    from academiceval.store.workspace import resolve_home

    try:
        layout = Layout.of(resolve_home(home))
        window = resolve_window(after, None)
        a, b = (load_run(_run_path(r, layout)) for r in (run_a, run_b))
        if a.spec.round != b.spec.round:
            console.print(f"[yellow]note:[/] runs of different rounds ({a.spec.round} vs {b.spec.round})")
        diffs = compare_scores(
            a.scores,
            b.scores,
            a_label=a.label,
            b_label=b.label,
            after=window.after,
            split=split,
            metrics=metric_names(metric),
        )
    except AcademicEvalError as e:
        raise fail(e) from e
    if not diffs:
        raise fail("the two runs have no scored samples in common (same metric configuration, task and setting)")
    if as_json:
        typer.echo(json.dumps([d.model_dump(mode="json") for d in diffs], indent=2))
        return
    by_metric: dict[str, list] = {}
    for d in diffs:  # one table per metric: its long name goes in the title, not in a column of every row
        by_metric.setdefault(f"{d.metric}:{d.value}", []).append(d)
    cols = ["task", "setting", "n", "A", "B", "A−B [95% CI]", "A/tie/B wins", "p", "verdict"]
    for name, ds in by_metric.items():
        rows = [
            (
                d.task,
                d.setting,
                d.n,
                _fmt(d.mean_a),
                _fmt(d.mean_b),
                fmt_diff(d),
                f"{d.wins_a}/{d.ties}/{d.wins_b}",
                f"{d.p_value:.4f}" if d.p_value is not None else "—",
                d.verdict,
            )
            for d in ds
        ]
        console.print(summary_table(f"{name}   A = {a.label}   B = {b.label}", cols, rows))
    console.print(f"test: {TEST}; significant when p < {1 - diffs[0].level:.2f}")
