"""`academiceval export RUN_DIR --format leval --out DIR`: a run's answers in a peer's file format (thin wrapper
over `runs.export.export_run`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, at_least_one, console, err_console, fail, summary_table


def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (runs/ROUND/MODEL) written by `academiceval run`.")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="leval: L-Eval prediction files, one <task>.pred.jsonl per task id (read by `score-predictions "
            "--format leval`, `judge-predictions` and L-Eval's own auto_eval.py).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory for the files.")],
    epoch: Annotated[
        int, typer.Option("--epoch", callback=at_least_one, help="Which epoch of a repeated run (default 1).")
    ] = 1,
    partial: Annotated[
        bool,
        typer.Option(
            "--partial",
            help="Export the answered samples even if others have no answer (failed requests, empty or refused "
            "answers, never run); by default such a run is refused, since a missing prediction would be scored as "
            "a wrong one.",
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace files that already exist in --out.")] = False,
    round_dir: Annotated[
        Path | None, typer.Option(help="The round the run was made on (default: found from run.json).")
    ] = None,
    home: HomeOption = None,
) -> None:
    """Write a run's answers in a peer's format; prompts are re-rendered and checked against what was sent."""
    from academiceval.errors import AcademicEvalError
    from academiceval.runs.export import export_run

    try:
        result = export_run(
            run_dir, fmt, out, epoch=epoch, partial=partial, force=force, round_dir=round_dir, home=home
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
