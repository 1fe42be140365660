"""`academiceval update` (placeholder until its issue lands; replaced by the owning module)."""

from __future__ import annotations

import typer


def update() -> None:
    """Not built yet."""
    raise typer.Exit(3)
