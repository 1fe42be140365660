"""`academiceval stats ROUND`: the round's Table 2 (samples, splits, WordPiece lengths, compression, timespan)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer

from academiceval.cli.common import HomeOption, console, fail, summary_table


def stats(
    round_ref: Annotated[
        str, typer.Argument(metavar="ROUND", help="Round name in the workspace, or a round directory.")
    ],
    home: HomeOption = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Also write the table as Markdown to this file.")
    ] = None,
    recount: Annotated[
        bool, typer.Option("--recount", help="Re-tokenise every rendered prompt instead of using stored counts.")
    ] = False,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Skip checking file sha256s against the manifest.")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the statistics as JSON (per config, the co-author spread, the notes)."),
    ] = False,
) -> None:
    """Per-setting statistics of a round (AcademicEval's Table 2 for this round).

    Samples, split percentages, mean input/output BERT WordPiece tokens, compression rate (input/output) and the
    test timespan, as a table and optionally Markdown.
    """
    from academiceval.errors import AcademicEvalError
    from academiceval.rounds import stats as rs
    from academiceval.store.artifacts import Layout, load_round
    from academiceval.store.workspace import resolve_home

    try:
        rnd = load_round(Layout.of(resolve_home(home)).find_round(round_ref), verify=not no_verify)
        table = rs.round_stats(rnd, recount=recount)
    except AcademicEvalError as exc:
        raise fail(exc) from None
    title = rs.window_title(rnd)
    spread = rs.coauthor_spread(rnd)
    split_notes = rs.split_notes(rnd.manifest, precisions=rs.coarsest_precisions(rnd))
    if as_json:
        out = {
            "round": rnd.manifest.round,
            "windows": title,
            "configs": [{**dataclasses.asdict(c), "timespan": c.timespan()} for c in table],
            "coauthor_spread": [dataclasses.asdict(d) for d in spread],
            "notes": split_notes,
        }
        typer.echo(json.dumps(out, indent=2, default=str))
        return
    console.print(title)  # its own line: wider than the table, it would wrap as the table's title
    console.print(summary_table("", rs.CONSOLE_COLUMNS, rs.console_rows(table)))
    console.print(summary_table("", rs.TEST_DATES_COLUMNS, rs.test_dates_rows(table)))
    console.print(rs.CONSOLE_KEY, style="dim")
    if spread:
        cap = rnd.manifest.config.get("coauthor_cap")
        console.print(
            summary_table(
                f"co-author demonstrations: spread over papers (cap: {cap or 'none'} uses per config and split)",
                rs.CONSOLE_SPREAD_COLUMNS,
                [d.row() for d in spread],
            )
        )
        console.print(rs.CONSOLE_SPREAD_KEY, style="dim")
    for note in split_notes:
        console.print(f"[yellow]note:[/] {note}")
    if markdown is not None:
        notes = "".join(f"\n- {n}" for n in split_notes)
        text = rs.markdown(table, title=title) + (f"\nNotes:{notes}\n" if notes else "")
        if spread:
            text += "\n| " + " | ".join(rs.SPREAD_COLUMNS) + " |\n|" + "---|" * len(rs.SPREAD_COLUMNS) + "\n"
            text += "".join("| " + " | ".join(d.row()) + " |\n" for d in spread)
        markdown.write_text(text, encoding="utf-8")
        console.print(f"Markdown written to {markdown}")
