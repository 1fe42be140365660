"""`academiceval report`: leaderboard (Markdown + static HTML), plots and results.json from saved runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from academiceval.cli.common import (
    METRIC_SPELLING,
    METRIC_TO_SHOW,
    HomeOption,
    console,
    fail,
    metric_names,
    not_negative,
    summary_table,
)

MAX_METRIC_COLUMNS = 4  # more metrics than this (a report over several rounds) share one column, a line each


def short_metric_names(keys: list[str]) -> dict[str, str]:
    """A metric's name for a narrow table: a long name (`bertscore-all-MiniLM-L6-v2-L6-window`) by its family
    (`bertscore`) when no other metric shown shares that family; the full names are printed under the table."""
    family = {k: k.split("-", 1)[0] if len(k) > 12 else k for k in keys}
    counts = Counter(family.values())
    return {k: family[k] if counts[family[k]] == 1 and family[k] not in keys else k for k in keys}


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
        typer.Option(
            *METRIC_TO_SHOW,
            "--rank-by",
            help="The one metric to rank by (a name from `score --metrics`, or a prefix, e.g. bertscore) "
            + METRIC_SPELLING
            + "; every scored metric is reported. Default: rouge-l.",
        ),
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
    from academiceval.scores.windows import resolve_window
    from academiceval.store.artifacts import Layout, check_name, find_run_dirs, read_run_spec
    from academiceval.store.workspace import resolve_home

    layout = Layout.of(resolve_home(home))
    ranked = metric_names(metric)
    if ranked and len(ranked) > 1:
        raise fail(
            f"report ranks by one metric, not {len(ranked)} ({', '.join(ranked)}): every scored metric is reported; "
            "pass one with --metric (e.g. --metric rouge-l)"
        )
    try:
        report_name = check_name(round_name, "--round") if round_name else "all"
        window = resolve_window(after, after_cutoff, model_info=model_info)
        sources = runs or [layout.runs_dir]
        if round_name:
            found = {spec.round for d in find_run_dirs(sources) if (spec := read_run_spec(d)) is not None}
            if round_name not in found:
                raise fail(
                    f"no saved runs of round {round_name!r} under {', '.join(map(str, sources))}"
                    f" (runs found for: {', '.join(sorted(found)) or 'no round'})"
                )
        paths = make_report(
            sources,
            out or layout.report_dir(report_name),
            round_name=round_name,
            after=window.after,
            after_reason=window.reason,
            split=split,
            prefer_metric=ranked[0] if ranked else None,
            rounds_dir=rounds_dir or (layout.rounds_dir if layout.rounds_dir.is_dir() else None),
            examples_per_task=examples,
        )
    except AcademicEvalError as e:
        raise fail(e) from e
    res = paths.results
    assert res is not None
    keys = list(dict.fromkeys(k for r in res.rows for k in r.metrics))
    short = short_metric_names(keys)
    means = [{k: f"{m.main.mean:.3f}" for k, m in r.metrics.items() if m.main.mean is not None} for r in res.rows]
    any_errors = any(r.counts.errors for r in res.rows)  # a column of zeros is said in one line under the table
    columns = ["model", "task", "setting", "n", *(["errors"] if any_errors else [])]

    def first(r) -> list[object]:
        errors = [r.counts.errors] if any_errors else []
        return [escape(r.label), r.task, r.setting, r.counts.samples, *errors]  # '[probe=…]' is text, not markup

    if len(keys) <= MAX_METRIC_COLUMNS:  # a column of numbers per metric: never folded, easy to scan
        columns += [short[k] for k in keys]
        rows = [[*first(r), *(m.get(k, "—") for k in keys)] for r, m in zip(res.rows, means, strict=True)]
    else:  # many metrics (a report over several rounds): one line per metric in one column
        columns.append("means")
        rows = [[*first(r), "\n".join(f"{short[k]} {v}" for k, v in m.items()) or "—"]
                for r, m in zip(res.rows, means, strict=True)]  # fmt: skip
    console.print(summary_table("report", columns, rows))
    if not any_errors:
        console.print("errors: none in any cell")
    for k in keys:
        if short[k] != k:
            console.print(f"{short[k]} = {k}")
    for n in res.notes:
        console.print(f"[yellow]note:[/] {n}")
    for p in res.problems[:10]:
        console.print(f"[yellow]problem:[/] {p}")
    console.print(f"leaderboard: {paths.leaderboard_md}")
    console.print(f"HTML:        {paths.index_html}")
    console.print(f"results:     {paths.results_json}")
