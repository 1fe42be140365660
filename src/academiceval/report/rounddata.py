"""The round a run was made on, as the report needs it (references on the examples page, not-run counts).

Run records deliberately do not repeat the reference text; it lives once, in the exported round, found by
`store.artifacts.locate_round` (`--rounds-dir`, or the `rounds/` beside the `runs/` the run directory sits in) and
read by `store.artifacts.load_round`. A missing or unreadable round is a recorded problem, not a failure: the
leaderboard needs only the saved records.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from pathlib import Path

from academiceval.errors import AcademicEvalError
from academiceval.rounds.stats import coarsest_precisions, split_notes
from academiceval.store.artifacts import MANIFEST, load_round, locate_round
from academiceval.store.models import Sample
from academiceval.store.paper_models import DatePrecision

_CACHE: dict[tuple[Path, int], dict[str, Sample]] = {}


def round_samples(
    round_name: str,
    *,
    rounds_dir: str | Path | None = None,
    run_dir: str | Path | None = None,
    problems: list[str] | None = None,
) -> dict[str, Sample] | None:
    """sample_id -> Sample for the round, or None (with the reason appended to `problems`)."""
    d = locate_round(round_name, rounds_dir=rounds_dir, run_dir=None if rounds_dir is not None else run_dir)
    if d is None:
        if problems is not None:
            problems.append(
                f"round {round_name!r} not found (pass --rounds-dir); references and not-run counts omitted"
            )
        return None
    d = d.resolve()
    key = (d, (d / MANIFEST).stat().st_mtime_ns)  # a rebuilt round is re-read
    if key in _CACHE:
        return _CACHE[key]
    try:
        # No sha256 verification here: the report only shows reference texts, and the runs already record the
        # manifest hash they were made against.
        samples = load_round(d, verify=False).samples_by_id()
    except (AcademicEvalError, OSError, ValueError) as e:  # a damaged export: the report goes on
        if problems is not None:
            problems.append(f"round {round_name!r} at {d} could not be read: {type(e).__name__}: {e}")
        return None
    _CACHE[key] = samples
    return samples


def expected_samples(
    round_name: str,
    *,
    rounds_dir: str | Path | None = None,
    run_dir: str | Path | None = None,
    problems: list[str] | None = None,
) -> dict[tuple[str, str], list[tuple[str, date, str, DatePrecision]]] | None:
    """(task, setting) -> [(sample_id, published, split, date_precision)] of the round, or None when it cannot be
    read. The precision travels with the date: a sample dated only "2024" is not after a 2024-06-01 cutoff."""
    samples = round_samples(round_name, rounds_dir=rounds_dir, run_dir=run_dir, problems=problems)
    if samples is None:
        return None
    out: dict[tuple[str, str], list[tuple[str, date, str, DatePrecision]]] = defaultdict(list)
    for s in samples.values():
        out[(s.task, s.setting)].append((s.sample_id, s.published, s.split, s.date_precision))
    return dict(out)


def round_notes(
    round_name: str, *, rounds_dir: str | Path | None = None, run_dir: str | Path | None = None
) -> list[str]:
    """What a reader should know about the round's splits (`rounds.stats.split_notes`); empty when not found."""
    d = locate_round(round_name, rounds_dir=rounds_dir, run_dir=None if rounds_dir is not None else run_dir)
    if d is None:
        return []
    try:
        rnd = load_round(d, verify=False)
        # low n is stated by the report from the cells it shows (one line after the results), not per split here
        notes = split_notes(rnd.manifest, precisions=coarsest_precisions(rnd), low_n=False)
        return [f"round {round_name}: {n}" for n in notes]
    except (AcademicEvalError, OSError, ValueError):
        return []
