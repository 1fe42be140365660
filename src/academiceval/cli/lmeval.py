"""`academiceval lm-eval import OUT`: lm-evaluation-harness output of exported tasks as academiceval runs (thin
wrapper over `integrations.lmeval.samples.import_output`); the way back from `export --format lm-eval`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, console, err_console, fail

app = typer.Typer(
    help="lm-evaluation-harness: bring its answers on exported rounds back as runs (`export --format lm-eval` "
    "writes the tasks).",
    no_args_is_help=True,
)


@app.command("import")
def import_(
    output: Annotated[
        Path,
        typer.Argument(
            metavar="OUT", help="lm_eval's --output_path folder (searched for results_*.json), or one results file."
        ),
    ],
    run_name: Annotated[
        str | None, typer.Option(help="Run directory name (default lm-eval__<lm-eval model>__<model name>).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a run imported before under the same name.")] = False,
    home: HomeOption = None,
) -> None:
    """Import the answers lm-eval logged (--log_samples) on tasks written by `academiceval export --format lm-eval`
    as runs/ROUND/RUN: then `academiceval score RUN_DIR` gives lm-eval's numbers, and report/compare see the run.
    The newest results file of each folder is read; what lm-eval sent is checked against each doc's prompt."""
    from academiceval.errors import AcademicEvalError
    from academiceval.integrations.lmeval.samples import import_output

    try:
        report = import_output(output, home=home, run_name=run_name, force=force)
    except AcademicEvalError as e:
        raise fail(e) from None
    for r in report.runs:  # one line per run, never cut (a run name is long)
        console.print(
            f"{r.round}: {r.records} answers ({r.errors} blank) → {r.run_dir}; prompts sent = the round's: "
            f"{r.prompts_equal}/{r.prompts_equal + r.prompts_changed}",
            soft_wrap=True,
        )
    for why, n in sorted(report.skipped.items()):
        err_console.print(f"[yellow]not imported[/] ×{n}: {why}", soft_wrap=True)
    for r in report.runs:
        if r.prompts_changed:
            err_console.print(
                f"[yellow]warning:[/] {r.prompts_changed} answers of {r.run_dir.name} came from prompts other than the "
                "round's (a system instruction, few-shot examples or edited docs): they are marked "
                "prompt_not_the_rounds and are not comparable with other runs of the round",
                soft_wrap=True,
            )
        if not r.round_found:
            err_console.print(
                f"[yellow]round {r.round} is not in this workspace:[/] score with "
                f"`academiceval score {r.run_dir} --round-dir ROUND_DIR`",
                soft_wrap=True,
            )
    console.print("score them: academiceval score " + " ".join(str(r.run_dir) for r in report.runs), soft_wrap=True)
