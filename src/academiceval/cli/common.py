"""Options and output helpers shared by every command (the CLI is a thin layer over the Python API)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
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


def fail(message: str | BaseException, code: int | None = None) -> typer.Exit:
    """Print an actionable error (one line) and return the Exit to raise. Given an `AcademicEvalError`, the exit
    status is its own: 2 for bad input (`ConfigError` and its kin), 1 for a failure."""
    if code is None:
        code = int(getattr(message, "exit_code", 2)) if isinstance(message, BaseException) else 2
    err_console.print(f"[bold red]error:[/] {escape(str(message))}", soft_wrap=True)
    return typer.Exit(code)


# ---- numeric options: one validator for every command (issue 10, finding 10) ----------------------------------
def _option_name(param: typer.CallbackParam) -> str:
    return max(param.opts, key=len) if param.opts else f"--{param.name}"


def _reject(param: typer.CallbackParam, value: object, want: str) -> typer.Exit:
    return fail(f"{_option_name(param)} {value}: must be {want}")


def positive_seconds(param: typer.CallbackParam, value: float | None) -> float | None:
    """A duration option: a finite number of seconds above 0 (refuses inf, nan, 0 and negatives)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise _reject(param, value, "a finite number of seconds above 0 (e.g. 600)")
    return value


def positive_number(param: typer.CallbackParam, value: float | None) -> float | None:
    """A rate or fraction-like option: finite and above 0."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise _reject(param, value, "a finite number above 0")
    return value


def at_least_one(param: typer.CallbackParam, value: int | None) -> int | None:
    """A count option (samples, workers, connections, tokens): 1 or more."""
    if value is not None and value < 1:
        raise _reject(param, value, "a whole number of at least 1")
    return value


def not_negative(param: typer.CallbackParam, value: int | None) -> int | None:
    """A count where 0 means "none" (overlaps, examples, distractors)."""
    if value is not None and value < 0:
        raise _reject(param, value, "a whole number of at least 0")
    return value


def port_number(param: typer.CallbackParam, value: int | None) -> int | None:
    if value is not None and not 0 <= value <= 65535:
        raise _reject(param, value, "a TCP port between 0 (any free port) and 65535")
    return value


def not_negative_seconds(param: typer.CallbackParam, value: float | None) -> float | None:
    """A pause option where 0 means "no pause": finite and not negative."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise _reject(param, value, "a finite number of seconds, 0 or more")
    return value


def fraction(param: typer.CallbackParam, value: float | None) -> float | None:
    """A share: a finite number from 0 to 1."""
    if value is not None and not (math.isfinite(value) and 0 <= value <= 1):
        raise _reject(param, value, "a number from 0 to 1 (e.g. 0.5)")
    return value
