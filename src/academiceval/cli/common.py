"""Options and output helpers shared by every command (the CLI is a thin layer over the Python API)."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.errors import MarkupError
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text


class _WholeLinesConsole(Console):
    """A console that never crops a line at the terminal's width: a table wider than 80 columns (see `FitTable`)
    is printed whole and the terminal wraps it, rather than losing its right-hand columns (issue 28 item 7)."""

    def print(self, *objects, **kwargs) -> None:
        kwargs.setdefault("crop", False)
        super().print(*objects, **kwargs)


console = _WholeLinesConsole(stderr=False)
err_console = _WholeLinesConsole(stderr=True)


_NUMERIC = re.compile(r"^[\s\d.,:;%+\-−–—=<>≤≥±/()\[\]x]*$")
TEXT_MIN_WIDTH = 12  # a text cell's words fold only beyond this width; a number never folds
HEADER_MIN_WIDTH = 4  # headers fold first: a header word is kept whole only up to this width


def _longest_word(cells: Iterable[str]) -> int:
    return max((len(w) for c in cells for w in c.split()), default=1)


class FitTable(Table):
    """A table that stays readable at 80 columns and in a pipe (issue 28 item 7).

    Cells wrap at spaces and a long word folds onto the next line (never "…"). A column of numbers
    (`0.306 [0.209, 0.411]`, `9/0/4`, `12.5%`) is never narrower than its longest number, so a number or an
    interval's bound is never cut; a text column may fold down to `TEXT_MIN_WIDTH`. Widths start at those
    minimums and grow toward each column's natural width while the console has room; when even the minimums do
    not fit, the table is drawn at its minimum width and printed whole (`_WholeLinesConsole`), never squeezed."""

    def _calculate_column_widths(self, console, options):
        natural = [self._measure_column(console, options.update_width(10_000), c).maximum for c in self.columns]
        floor, whole, data, numeric, heads = [], [], [], [], []
        for i, col in enumerate(self.columns):
            cells = [str(c) for c in col.cells]
            pad = self._get_padding_width(i)
            numeric.append(bool(cells) and all(_NUMERIC.match(c.replace("n=", "")) for c in cells))
            word = _longest_word(cells)
            header = min(_longest_word([str(col.header)]), HEADER_MIN_WIDTH)
            floor.append(min(natural[i], pad + max(word if numeric[i] else min(word, TEXT_MIN_WIDTH), header)))
            whole.append(max(floor[i], min(natural[i], pad + word)))  # no word folded
            data.append(max(floor[i], min(natural[i], pad + max((len(c) for c in cells), default=0))))
            heads.append(max(floor[i], min(natural[i], pad + _longest_word([str(col.header)]))))  # no word cut
        widths = list(floor)
        room = options.max_width - sum(widths)
        # what gets the room first: numbers on one line, header words unbroken ("slots", not "slot/s"), then whole
        # words, then whole cell texts, then whole headers
        for target, order in (
            (data, [i for i in range(len(widths)) if numeric[i]]),
            (heads, list(range(len(widths)))),
            (whole, [i for i in range(len(widths)) if not numeric[i]]),
            (data, [i for i in range(len(widths)) if not numeric[i]]),
            (natural, list(range(len(widths)))),
        ):
            want = {i: max(0, target[i] - widths[i]) for i in order}
            total = sum(want.values())
            if room <= 0 or total == 0:
                continue
            if total <= room:
                extra = want
            else:
                extra = {i: (w * room) // total for i, w in want.items()}
                for i in sorted(want, key=lambda i: -want[i])[: room - sum(extra.values())]:
                    extra[i] += 1  # the rounding remainder to the columns that want the most
            for i, e in extra.items():
                widths[i] += e
                room -= e
        return widths

    def _floor(self, console, options) -> int:
        return sum(self._calculate_column_widths(console, options.update_width(1))) + self._extra_width

    def __rich_console__(self, console, options):
        if self._floor(console, options) > options.max_width:
            # too narrow: no outer frame or edge padding before anything wraps further
            self.pad_edge, self.show_edge = False, False
        floor = self._floor(console, options)
        if floor > options.max_width:
            options = options.update_width(floor)
        yield from super().__rich_console__(console, options)


HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home",
        envvar="ACADEMICEVAL_HOME",
        help="Workspace directory (SQLite database, PDFs, rounds, runs). Default: ./academiceval-data.",
        show_default=False,
    ),
]


# ---- metric options (issue 28 item 8) --------------------------------------------------------------------------
# One rule: `--metrics` says what to compute (score, demo, export), `--metric` which computed metric to show or rank
# by (report, compare). Each command takes the other spelling too, with the same meaning as its own, so a user who
# types the "wrong" one gets what the command does rather than an error; comma-separated or repeated, both work.
METRICS_TO_COMPUTE = ("--metrics", "--metric")
METRIC_TO_SHOW = ("--metric", "--metrics")
METRIC_SPELLING = "(`--metrics` computes, `--metric` shows; either spelling works here)"


def metric_names(values: str | Sequence[str] | None) -> list[str] | None:
    """The metric names of a `--metrics`/`--metric` option: repeated and comma-separated values, in order, once
    each (None when none was given)."""
    if not values:
        return None
    given = [values] if isinstance(values, str) else list(values)
    names = [m.strip() for v in given for m in v.split(",") if m.strip()]
    return list(dict.fromkeys(names)) or None


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
    table = FitTable(title=title, show_lines=False, show_header=any(str(c).strip() for c in columns))
    for c in columns:
        table.add_column(c, overflow="fold")
    cells = [[str(x) for x in r] for r in rows]
    for r in cells:
        table.add_row(*r)
    if _json_tables is not None:
        _json_tables.append({"title": _plain(title), "columns": [_plain(str(c)) for c in columns],
                             "rows": [[_plain(x) for x in r] for r in cells]})  # fmt: skip
    return table


# ---- `--json` on every command (issue 28 item 7) -------------------------------------------------------------
# A command without its own `--json` gets one (cli.main adds it to every command): every table the command builds
# with `summary_table` is then written to stdout as JSON when the command ends, and what it prints for people goes
# to stderr, so `academiceval CMD ... --json | jq` reads the tables whole.
_json_tables: list[dict[str, Any]] | None = None


def _plain(text: str) -> str:
    try:
        return Text.from_markup(text).plain
    except MarkupError:
        return text


def tables_as_json(ctx: Any) -> None:
    """Switch this command's tables to JSON on stdout (the `--json` callback of commands without their own)."""
    global _json_tables
    _json_tables = []
    pinned = console._file  # None: the console follows sys.stdout, as it must again afterwards
    console.file = sys.stderr
    ctx.call_on_close(lambda: _write_tables(pinned))


def _write_tables(pinned: Any) -> None:
    global _json_tables
    tables, _json_tables = _json_tables or [], None
    console._file = pinned
    sys.stdout.write(json.dumps(tables, indent=2, ensure_ascii=False) + "\n")


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
