"""Finding and reading the round a run was made on (for references on the examples page and not-run counts).

Run records deliberately do not repeat the reference text; it lives once, in the exported round. The report
therefore looks the round up: `--rounds-dir`, or the `rounds/` folder beside the `runs/` folder the run
directory sits in (the workspace layout). A missing round is a recorded problem, not a failure: the
leaderboard needs only the saved records.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from pathlib import Path

from academiceval.rounds.models import Sample


def find_round_dir(
    round_name: str, *, rounds_dir: str | Path | None = None, run_dir: str | Path | None = None
) -> Path | None:
    """`rounds_dir/ROUND` if given, else `<home>/rounds/ROUND` for a run directory under `<home>/runs/`."""
    if rounds_dir is not None:
        p = Path(rounds_dir)
        for cand in (p / round_name, p):
            if cand.is_dir() and (cand.name == round_name or (cand / "manifest.json").is_file()):
                return cand
        return None
    if run_dir is None:
        return None
    for parent in Path(run_dir).resolve().parents:
        if parent.name == "runs":
            cand = parent.parent / "rounds" / round_name
            return cand if cand.is_dir() else None
    return None


def load_round_samples(round_dir: Path) -> list[Sample]:
    """Every sample of an exported round, through the rounds stage's own reader."""
    from academiceval.rounds import io as rounds_io  # the owner of the export format

    # No sha256 verification here: the report only shows reference texts, and the runs already record the
    # manifest hash they were made against.
    loaded = rounds_io.load_round(round_dir, verify=False)
    samples = loaded.samples()
    return [s if isinstance(s, Sample) else Sample.model_validate(s) for s in samples]


_CACHE: dict[tuple[Path, int], dict[str, Sample]] = {}


def round_samples(
    round_name: str,
    *,
    rounds_dir: str | Path | None = None,
    run_dir: str | Path | None = None,
    problems: list[str] | None = None,
) -> dict[str, Sample] | None:
    """sample_id -> Sample for the round, or None (with the reason appended to `problems`)."""
    d = find_round_dir(round_name, rounds_dir=rounds_dir, run_dir=run_dir)
    if d is None:
        if problems is not None:
            problems.append(
                f"round {round_name!r} not found (pass --rounds-dir); references and not-run counts omitted"
            )
        return None
    d = d.resolve()
    manifest = d / "manifest.json"
    key = (d, (manifest if manifest.exists() else d).stat().st_mtime_ns)  # a rebuilt round is re-read
    if key in _CACHE:
        return _CACHE[key]
    try:
        samples = load_round_samples(d)
    except Exception as e:  # the round reader may be missing or the export damaged; the report goes on
        if problems is not None:
            problems.append(f"round {round_name!r} at {d} could not be read: {type(e).__name__}: {e}")
        return None
    _CACHE[key] = {s.sample_id: s for s in samples}
    return _CACHE[key]


def expected_samples(
    round_name: str,
    *,
    rounds_dir: str | Path | None = None,
    run_dir: str | Path | None = None,
    problems: list[str] | None = None,
) -> dict[tuple[str, str], list[tuple[str, date, str]]] | None:
    """(task, setting) -> [(sample_id, published, split)] of the round, or None when it cannot be read."""
    samples = round_samples(round_name, rounds_dir=rounds_dir, run_dir=run_dir, problems=problems)
    if samples is None:
        return None
    out: dict[tuple[str, str], list[tuple[str, date, str]]] = defaultdict(list)
    for s in samples.values():
        out[(s.task, s.setting)].append((s.sample_id, s.published, s.split))
    return dict(out)
