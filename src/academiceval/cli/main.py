"""The `academiceval` command. Each subcommand lives in its own module and only registers here.

Command modules must stay light at import time (no torch/transformers imports at module level) so that
`academiceval --help` is instant.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Annotated, Any, get_args

import typer

from academiceval import __version__
from academiceval.cli import agreement as _agreement
from academiceval.cli import (
    audit,
    build,
    collect,
    compare,
    demo,
    export,
    ingest,
    listings,
    mirror,
    publist,
    release,
    report,
    run,
    score,
    stats,
    update,
)
from academiceval.cli import lmeval as _lmeval
from academiceval.cli import score_predictions as _score_predictions
from academiceval.cli.common import tables_as_json
from academiceval.store.tasks import families

app = typer.Typer(
    name="academiceval",
    help=(
        "A live, contamination-free long-context writing benchmark built from arXiv papers.\n\n"
        "Data flow: mirror/collect (metadata + co-author graph) → ingest (PDF → structured paper) → build "
        "(dated round) → run (a model) → score → report. `academiceval demo` runs the whole chain offline."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

app.command("ingest")(ingest.ingest)
app.add_typer(mirror.app, name="mirror")
app.command("import-publist")(publist.import_list)
# the old verb, kept for one release: `import` alone reads as the families' `cloze/leval/elaip import`
app.command(publist.OLD_NAME, help="Old name of `import-publist` (kept for one release; says so when used).")(
    publist.import_list
)
app.command("collect")(collect.collect)
app.command("update")(update.update)
app.command("build")(build.build)
app.command("stats")(stats.stats)
app.command("audit")(audit.audit)
app.command("run")(run.run)
app.command("score")(score.score)
app.command("export")(export.export)
app.command("score-predictions")(_score_predictions.score_predictions)
app.command("judge-predictions")(_score_predictions.judge_predictions)
app.command("judge-length-control")(_score_predictions.judge_length_control)
app.command("agreement")(_agreement.agreement)
app.add_typer(_lmeval.app, name="lm-eval")
app.command("report")(report.report)
app.command("release")(release.release)
app.command("compare")(compare.compare)
app.command("models")(listings.models)
app.command("metrics")(listings.metrics)
app.command("demo")(demo.demo)


def mount_families(root: typer.Typer) -> None:
    """Mount every registered task family's command-line sub-app (`academiceval cloze|leval|elaip …`, and those
    of installed family packages) under its `Family.command`, once."""
    mounted = {g.name for g in root.registered_groups}
    for fam in families():
        if fam.command and fam.command not in mounted:
            sub = fam.cli()
            if sub is not None:
                root.add_typer(sub, name=fam.command)
                mounted.add(fam.command)


mount_families(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"academiceval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """academiceval command line."""


# how option values are shown in --help (typer's defaults read `<list[Path]>`, `<int range> [x>=1]`, `<bool>`)
_METAVARS = {str: "TEXT", int: "N", float: "NUMBER", bool: ""}


def _placeholder(p: Any) -> str:
    desc = p.type_descriptor
    if getattr(p, "is_flag", False):
        return ""
    if desc.is_choice and desc.choices:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices)
    if desc.is_path:
        return "PATH"
    ann = desc.annotation
    if desc.is_list:
        args = get_args(ann)
        ann = args[0] if args else str
        if isinstance(ann, type) and issubclass(ann, PurePath):
            return "PATH"
    return _METAVARS.get(ann, getattr(ann, "__name__", "VALUE").upper())


def readable_metavars(cmd: Any) -> Any:
    """Give every option of the command tree a plain placeholder (TEXT, N, PATH, a|b|c), flags none, and
    arguments a plain type column (PATH...)."""
    for p in cmd.params:
        if not hasattr(p, "type_descriptor"):
            continue
        if getattr(p, "param_type_name", "") == "argument":
            shown = _placeholder(p) + ("..." if p.nargs != 1 else "")
            p.display_type_rich = lambda ctx, _shown=shown: _shown
        elif p.metavar is None:
            p.metavar = _placeholder(p)
    make_help = cmd.get_help_option

    def get_help_option(ctx: Any, _make: Any = make_help) -> Any:
        opt = _make(ctx)
        if opt is not None:
            opt.metavar = ""
        return opt

    cmd.get_help_option = get_help_option
    for sub in getattr(cmd, "commands", {}).values():
        readable_metavars(sub)
    return cmd


def _json_option() -> Any:
    """A `--json` flag as typer builds one (typer vendors its own click), calling `tables_as_json` when given."""
    holder = typer.Typer(add_completion=False)

    @holder.command()
    def _holder(
        json_: Annotated[
            bool,
            typer.Option(
                "--json",
                callback=lambda ctx, value: tables_as_json(ctx) if value else None,
                help="Print the tables this command shows as JSON on stdout (the rest of its output goes to stderr).",
            ),
        ] = False,
    ) -> None:
        """Holds the option."""

    (param,) = [p for p in typer.main.get_command(holder).params if "--json" in p.opts]
    param.expose_value = False  # the command's own function never sees it
    return param


def json_everywhere(cmd: Any) -> Any:
    """Give every command without its own `--json` one that prints its tables as JSON (`cli.common`)."""
    subs = getattr(cmd, "commands", None)
    if subs is not None:
        for sub in subs.values():
            json_everywhere(sub)
    elif not any("--json" in getattr(p, "opts", ()) for p in cmd.params):
        cmd.params.append(_json_option())
    return cmd


def command() -> Any:
    """The click command `academiceval` runs: the typer app (with every family's sub-app) and readable help
    placeholders."""
    mount_families(app)
    return readable_metavars(json_everywhere(typer.main.get_command(app)))


def main() -> None:
    """The console entry point. An `AcademicEvalError` that a command did not catch, or a damaged SQLite file
    found mid-command, still ends as one line (what, where, what to do) with the error class's exit status (2 bad input,
    1 a failure) — never a traceback."""
    import sqlite3

    from academiceval.cli.common import fail
    from academiceval.errors import AcademicEvalError

    try:
        command()()
    except AcademicEvalError as e:
        raise SystemExit(fail(e).exit_code) from None
    except sqlite3.DatabaseError as e:
        from academiceval.store.workspace import DB_NAME, damaged_database, is_unusable, resolve_home

        if not is_unusable(e):
            raise

        home = _home_from_argv() or resolve_home(None)
        raise SystemExit(fail(damaged_database(home / DB_NAME, e)).exit_code) from None


def _home_from_argv() -> Path | None:
    import sys

    args = sys.argv[1:]
    for i, a in enumerate(args):
        if a == "--home" and i + 1 < len(args):
            return Path(args[i + 1])
        if a.startswith("--home="):
            return Path(a.split("=", 1)[1])
    return None


if __name__ == "__main__":
    main()
