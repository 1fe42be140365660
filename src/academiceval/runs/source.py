"""Reading a round for a run: resolve a name or path, verify it, and list its samples once.

The round format and its sha256 verification belong to `rounds.io.load_round`; a file whose sha256 no longer
matches is refused there (naming the file) before any request is sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from academiceval.errors import ConfigError
from academiceval.rounds.io import LoadedRound, load_round
from academiceval.rounds.models import Sample


@dataclass
class RoundView(LoadedRound):
    """A verified round plus its distinct samples, listed once for the run (name, paths, templates: LoadedRound)."""

    distinct_samples: list[Sample] = field(default_factory=list)


def resolve_round_dir(round_ref: str | Path, rounds_dir: Path | None) -> Path:
    """A path to a round directory, or a round name under the workspace's `rounds/`."""
    p = Path(round_ref)
    if p.is_dir():
        return p.resolve()
    if rounds_dir is not None and "/" not in str(round_ref) and (rounds_dir / str(round_ref)).is_dir():
        return (rounds_dir / str(round_ref)).resolve()
    known = sorted(d.name for d in rounds_dir.iterdir() if d.is_dir()) if rounds_dir and rounds_dir.is_dir() else []
    raise ConfigError(
        f"round {str(round_ref)!r} not found",
        hint=f"give a round directory or one of: {', '.join(known) or '(no rounds in the workspace)'}",
    )


def load_round_view(round_dir: Path, *, verify: bool = True) -> RoundView:
    """Every distinct sample of the round (a sample id appears once even if several configs hold it)."""
    rnd = load_round(round_dir, verify=verify)
    samples: list[Sample] = []
    seen: set[str] = set()
    for config in rnd.configs():
        for s in rnd.samples(config):
            if s.sample_id not in seen:
                seen.add(s.sample_id)
                samples.append(s)
    return RoundView(rnd.path, rnd.manifest, rnd.manifest_sha256, samples)
