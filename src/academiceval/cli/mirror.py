"""`academiceval mirror` (placeholder until its issue lands)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Local arXiv bulk mirror: index it into the workspace, or serve it over HTTP.")


@app.command("index")
def index() -> None:
    """Not built yet."""
    raise typer.Exit(3)
