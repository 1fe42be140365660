"""`academiceval agreement`: Kendall τ and Spearman ρ between automatic metrics and human scores."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import console, fail, summary_table


def agreement(
    human_csv: Annotated[Path, typer.Argument(help="CSV: model, score[, task][, setting|lie][, sample].", exists=True)],
    sources: Annotated[
        list[Path], typer.Argument(help="Run directories (with scores.jsonl) or L-Eval prediction files.")
    ],
    leval_data: Annotated[
        Path | None, typer.Option(help="L-Eval's LEval-data dir: puts a task id on prediction-file answers.")
    ] = None,
    setting: Annotated[
        str | None, typer.Option(help="Setting of every prediction file ('lie'/'no-lie'; default: read the prompt).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list instead of a table.")] = False,
) -> None:
    """Kendall τ and Spearman ρ between each metric and human scores, per task and setting.

    System level across models (as L-Eval reports, with and without its length instruction); sample level when
    the CSV scores single answers."""
    from academiceval.families.leval import agreement as leval_ag
    from academiceval.scores import agreement as ag

    try:
        human = ag.read_human_csv(human_csv)
        index = leval_ag.leval_task_index(leval_data) if leval_data else None
        metrics = []
        for src in sources:
            if src.is_dir():
                metrics += ag.metric_rows_from_run_dir(src)
            else:
                metrics += leval_ag.metric_rows_from_leval_file(src, setting=setting, task_index=index)
    except (OSError, ValueError, KeyError) as e:
        raise fail(f"{type(e).__name__}: {e}") from None
    rows = ag.agreement(human, metrics)
    if as_json:
        sys.stdout.write(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
        return

    def f(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    table = summary_table(
        "Metric–human agreement",
        ["level", "task", "setting", "metric", "n", "Kendall τ", "p", "Spearman ρ", "p"],
        [
            (
                r.level,
                r.task,
                r.setting,
                r.metric,
                r.n,
                f(r.kendall_tau),
                f(r.kendall_p),
                f(r.spearman_rho),
                f(r.spearman_p),
            )
            for r in rows
        ],
    )
    console.print(table)
