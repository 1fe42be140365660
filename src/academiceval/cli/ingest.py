"""`academiceval ingest` (placeholder until issue 2 lands)."""

from __future__ import annotations

import typer


def ingest() -> None:
    """Not built yet."""
    raise typer.Exit(3)
