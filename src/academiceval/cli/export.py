"""`academiceval export SOURCE [OUT] --format F`: one verb for what leaves the workspace in another tool's format.

- a run's answers as a peer's files: `export RUN_DIR --format leval --out DIR` (`runs.export.export_run`);
- a round as another harness's tasks: `export ROUND OUT --format lm-eval` (`cli.export_round`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import (
    METRIC_SPELLING,
    METRICS_TO_COMPUTE,
    HomeOption,
    at_least_one,
    console,
    err_console,
    fail,
    metric_names,
    summary_table,
)


def export(
    source: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="--format leval: a run directory (runs/ROUND/MODEL) written by `academiceval run`. "
            "--format lm-eval: a round name in the workspace, or a round directory.",
        ),
    ],
    out_arg: Annotated[
        Path | None, typer.Argument(metavar="[OUT]", help="Where to write (the same as --out).", show_default=False)
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="leval: L-Eval prediction files of a run, one <task>.pred.jsonl per task id (read by "
            "`score-predictions --format leval`, `judge-predictions` and L-Eval's own auto_eval.py). "
            "lm-eval: a round as lm-evaluation-harness tasks (one YAML per config + data + a utils.py with "
            "academiceval's scorer; run with `lm_eval --include_path OUT --tasks academiceval_<ROUND>`).",
        ),
    ] = "leval",
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the files.")] = None,
    epoch: Annotated[
        int, typer.Option("--epoch", callback=at_least_one, help="leval: which epoch of a repeated run (default 1).")
    ] = 1,
    partial: Annotated[
        bool,
        typer.Option(
            "--partial",
            help="leval: export the answered samples even if others have no answer (failed requests, empty or "
            "refused answers, never run); by default such a run is refused, since a missing prediction would be "
            "scored as a wrong one.",
        ),
    ] = False,
    split: Annotated[str, typer.Option(help="lm-eval: the split to export (train, val or test).")] = "test",
    config: Annotated[
        list[str] | None,
        typer.Option("--config", help="lm-eval: only this config (repeatable). Default: every config."),
    ] = None,
    metrics: Annotated[
        list[str] | None,
        typer.Option(
            *METRICS_TO_COMPUTE,
            help="lm-eval: metrics of the writing tasks, comma-separated or repeated (default rouge-l; e.g. "
            "rouge-l,bertscore) " + METRIC_SPELLING + ". "
            "Citation cloze and ElaipBench are scored by accuracy, L-Eval items by L-Eval's metric.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace what already exists at the destination.")] = False,
    round_dir: Annotated[
        Path | None, typer.Option(help="leval: the round the run was made on (default: found from run.json).")
    ] = None,
    home: HomeOption = None,
) -> None:
    """Write a run's answers in a peer's format (prompts re-rendered and checked against what was sent), or a round
    as another harness's tasks (prompts and output lengths as `academiceval run` sends them)."""
    from academiceval.cli.export_round import ROUND_FORMATS, export_round
    from academiceval.errors import AcademicEvalError
    from academiceval.runs.export import export_run, formats

    if fmt not in ROUND_FORMATS and fmt not in formats():
        known = [f"{n} (a run: {f.summary})" for n, f in formats().items()] + [f"{n} (a round)" for n in ROUND_FORMATS]
        raise fail(f"unknown --format {fmt!r}; one of: {'; '.join(known)}")
    if out is not None and out_arg is not None and out != out_arg:
        raise fail(f"two destinations given ({out_arg} and --out {out}): give one")
    dest = out or out_arg
    if dest is None:
        raise fail("no destination: give OUT (or --out DIR)")
    if fmt in ROUND_FORMATS:
        names = metric_names(metrics)
        export_round(source, dest, fmt, split=split, config=config, metrics=names, force=force, home=home)
        return
    run_dir = Path(source)

    try:
        result = export_run(
            run_dir, fmt, dest, epoch=epoch, partial=partial, force=force, round_dir=round_dir, home=home
        )
    except AcademicEvalError as e:
        raise fail(e) from None
    rows = [(name, str(path)) for name, path in result.files.items()]
    console.print(summary_table(f"{result.format} files of {run_dir} (epoch {result.epoch})", ["file", "path"], rows))
    err_console.print(f"{result.exported} answers exported")
    if result.missing:
        err_console.print(
            "[yellow]not exported (no answer):[/] " + "; ".join(f"{why} ×{n}" for why, n in result.missing.items()),
            soft_wrap=True,
        )
