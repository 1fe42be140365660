"""`academiceval collect` (placeholder until its issue lands; replaced by the owning module)."""

from __future__ import annotations

import typer


def collect() -> None:
    """Not built yet."""
    raise typer.Exit(3)
