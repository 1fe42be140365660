"""The `academiceval` command. Each subcommand lives in its own module and only registers here.

Command modules must stay light at import time (no torch/transformers imports at module level) so that
`academiceval --help` is instant.
"""

from __future__ import annotations

import typer

from academiceval import __version__
from academiceval.cli import build, collect, demo, ingest, mirror, release, report, run, score, stats, update

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
app.command("collect")(collect.collect)
app.command("update")(update.update)
app.command("build")(build.build)
app.command("stats")(stats.stats)
app.command("run")(run.run)
app.command("score")(score.score)
app.command("report")(report.report)
app.command("release")(release.release)
app.command("demo")(demo.demo)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"academiceval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """academiceval command line."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
