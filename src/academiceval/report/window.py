"""Resolving the report window: an explicit `--after DATE` or a model's knowledge cutoff (`--after-cutoff`).

The model-info table (release and knowledge-cutoff dates, user-extensible YAML) and the window rule belong to
the scores stage (`scores.windows`); the report only asks it, so `score --after-cutoff` and
`report --after-cutoff` always agree on the date and on how it was chosen.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path


def parse_date(text: str | date | None) -> date | None:
    from academiceval.scores.windows import _as_date

    return _as_date(text, "--after")


def resolve_window(
    after: str | date | None = None, after_cutoff: str | None = None, *, model_info: str | Path | None = None
) -> tuple[date | None, str | None]:
    """(date, human-readable reason) for the window, or (None, None) for all papers. At most one option."""
    from academiceval.scores.windows import resolve_window as scores_window

    w = scores_window(after, after_cutoff, model_info=model_info)
    return w.after, (w.reason if w.after is not None else None)
