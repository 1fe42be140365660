"""`academiceval release ROUND OUT`: a round as a dataset folder ready to publish (card, parquet per config,
SHA256SUMS, licence notes), withholding the newest test window's labels unless --with-labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, console, fail, summary_table


def release(
    round_ref: Annotated[
        str, typer.Argument(metavar="ROUND", help="Round name in the workspace, or a round directory.")
    ],
    out: Annotated[Path, typer.Argument(metavar="OUT", help="Directory to write the release into (new or empty).")],
    home: HomeOption = None,
    with_labels: Annotated[
        bool,
        typer.Option("--with-labels", help="Include the labels of the newest test window (withheld by default)."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace OUT if it holds a release or round (only files it lists).")
    ] = False,
) -> None:
    """Write ROUND as a publishable dataset folder that `datasets.load_dataset(OUT, CONFIG)` loads.

    By default the test split's labels (the newest window) are withheld, LiveBench-style: `academiceval run OUT
    --model SPEC` still runs a model on it (outputs only), and scoring waits for the labels.
    """
    from academiceval.errors import AcademicEvalError
    from academiceval.rounds.release import release_round
    from academiceval.store.artifacts import Layout, load_round
    from academiceval.store.workspace import resolve_home

    try:
        root = resolve_home(home)
        rnd = load_round(Layout.of(root).find_round(round_ref))
        res = release_round(rnd, out, with_labels=with_labels, force=force, home=root)
    except AcademicEvalError as exc:
        raise fail(exc) from None
    rows = [
        ("configs", len(res.configs)),
        ("samples", res.samples),
        ("labels withheld", f"{res.withheld} ({', '.join(res.withheld_splits)})" if res.withheld else "none"),
        ("files (in SHA256SUMS)", res.files),
    ]
    console.print(summary_table(f"release of round {rnd.name} → {res.out}", ("", "value"), rows))
    first = res.configs[0] if res.configs else "CONFIG"
    console.print(f'load it: datasets.load_dataset("{res.out}", "{first}")')
