"""Options and output helpers shared by every command (the CLI is a thin layer over the Python API)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

console = Console(stderr=False)
err_console = Console(stderr=True)

HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home",
        envvar="ACADEMICEVAL_HOME",
        help="Workspace directory (SQLite database, PDFs, rounds, runs). Default: ./academiceval-data.",
        show_default=False,
    ),
]


def progress(transient: bool = False) -> Progress:
    """A rich progress bar with count, elapsed and remaining time; quiet when not on a terminal."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=transient,
    )


def summary_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Table:
    # a (what, value) table has no column names: no header row rather than a blank one
    table = Table(title=title, show_lines=False, show_header=any(str(c).strip() for c in columns))
    for c in columns:
        table.add_column(c)
    for r in rows:
        table.add_row(*[str(x) for x in r])
    return table


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an actionable error and return the Exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}")
    return typer.Exit(code)
