"""The report's filter on saved runs. Run directories are read by `store.artifacts.load_run` (the one reader of
`run.json`, run records and `scores.jsonl`); this module keeps only what the report adds on top."""

from __future__ import annotations

from datetime import date


def in_window(published: date, after: date | None) -> bool:
    """Papers first submitted strictly after `after` (a model's knowledge cutoff) are in the window."""
    return after is None or published > after
