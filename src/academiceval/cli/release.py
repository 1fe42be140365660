"""`academiceval release ROUND OUT`: a round as a dataset folder ready to publish (card, parquet per config,
SHA256SUMS, licence notes), withholding the newest test window's papers unless --with-labels, after a leak check
over every file it writes."""

from __future__ import annotations

import json
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
        typer.Option("--with-labels", help="Publish the newest test window's papers too (withheld by default)."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace OUT if it holds a release or round (only files it lists).")
    ] = False,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", metavar="FILE", help="Also write the release summary and the leak check's report."),
    ] = None,
) -> None:
    """Write ROUND as a publishable dataset folder that `datasets.load_dataset(OUT, CONFIG)` loads.

    By default the test split's papers (the newest window) are withheld: none of their samples is in any config
    (a paper's tasks carry each other's labels); `withheld/` lists their ids, arXiv ids, dates and prompt hashes,
    and the workspace keeps the private key that scores submissions on them. A leak check over every written file
    refuses the release, naming the file and sample, if any withheld answer is recoverable.
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
    check = res.check
    rows: list[tuple[str, object]] = [
        ("configs published", len(res.configs)),
        ("samples published", res.samples),
        (
            "withheld",
            f"{res.withheld_papers} papers, {res.withheld_distinct} samples ({', '.join(res.withheld_splits)})"
            if res.withheld_splits
            else "nothing (--with-labels)",
        ),
    ]
    if res.dropped:
        rows.append(("left out (carry a withheld paper)", res.dropped))
    if check is not None:
        rows += [
            ("leak check: files / texts", f"{len(check.files)} / {check.texts}"),
            ("leak check: recoverable", f"{check.recoverable} of {check.withheld_samples}"),
        ]
    if res.key is not None:
        rows.append(("private key (keep it)", str(res.key)))
    rows.append(("files (in SHA256SUMS)", res.files))
    console.print(summary_table(f"release of round {rnd.name} → {res.out}", ("", "value"), rows))
    first = res.configs[0] if res.configs else "withheld"
    console.print(f'load it: datasets.load_dataset("{res.out}", "{first}")')
    if json_out is not None:
        data = {
            "round": rnd.name,
            "out": str(res.out),
            "configs": res.configs,
            "samples": res.samples,
            "withheld_splits": res.withheld_splits,
            "withheld_papers": res.withheld_papers,
            "withheld_samples": res.withheld_distinct,
            "dropped": res.dropped,
            "key": str(res.key) if res.key else None,
            "leak_check": check.model_dump(mode="json") if check is not None else None,
        }
        json_out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
