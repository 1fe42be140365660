"""Reading an exported round: the loader the runner, scorer and report use.

`verify=True` recomputes the sha256 of every file the manifest lists and refuses a round whose files changed
after it was built (scores on a silently edited round would not be comparable), naming the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from academiceval.errors import ConfigError
from academiceval.rounds.export import SPLITS, data_paths, file_sha256
from academiceval.rounds.models import RoundManifest, Sample

MANIFEST = "manifest.json"


class RoundIntegrityError(ConfigError):
    """A round file is missing or no longer matches the sha256 recorded in its manifest: scores on a silently
    changed round would not be comparable, so runs refuse it before sending any request."""

    code = "round_integrity"


@dataclass
class LoadedRound:
    path: Path
    manifest: RoundManifest
    manifest_sha256: str

    @property
    def name(self) -> str:
        return self.manifest.round

    @property
    def templates_dir(self) -> Path | None:
        """The templates the round was built with (copied into the round), for re-rendering prompts."""
        d = self.path / "templates"
        return d if d.is_dir() else None

    def configs(self) -> list[str]:
        return sorted(self.manifest.configs)

    def samples(self, config: str | None = None, *, split: str | None = None) -> Iterator[Sample]:
        """Samples of one config (all configs when None), streamed from parquet in split order."""
        names = self.configs() if config is None else [config]
        for name in names:
            info = self.manifest.configs.get(name)
            if info is None:
                raise ConfigError(
                    f"round {self.name} has no config {name!r}", hint=f"one of: {', '.join(self.configs())}"
                )
            for sp in SPLITS if split is None else (split,):
                rel = data_paths(name, sp)[0]
                if rel not in info.files:
                    continue
                pf = pq.ParquetFile(self.path / rel)
                for batch in pf.iter_batches(batch_size=64):
                    for row in batch.to_pylist():
                        yield Sample.model_validate(row)

    def render(self, sample: Sample, **kwargs: object) -> str:
        from academiceval.rounds.prompts import render_prompt

        return render_prompt(sample, templates_dir=self.templates_dir, **kwargs)  # type: ignore[arg-type]


def verify_round(round_dir: Path, manifest: RoundManifest) -> None:
    root = round_dir.resolve()
    for rel, expected in sorted(manifest.files.items()):
        p = (root / rel).resolve()
        if root not in p.parents:
            raise RoundIntegrityError(f"manifest lists a file outside the round: {rel!r}", source=str(round_dir))
        if not p.is_file():
            raise RoundIntegrityError(f"round file {rel} is missing (sha256 cannot be checked)", source=str(round_dir))
        actual = file_sha256(p)
        if actual != expected:
            raise RoundIntegrityError(
                f"round file {rel} has sha256 {actual[:16]}… but the manifest records {expected[:16]}…",
                source=str(round_dir),
                hint="the file changed after the round was built; rebuild the round or restore the file",
            )


def load_round(round_dir: str | Path, *, verify: bool = True) -> LoadedRound:
    d = Path(round_dir)
    mpath = d / MANIFEST
    if not mpath.is_file():
        raise ConfigError(f"{d} has no {MANIFEST}", hint="is this a round directory written by `academiceval build`?")
    raw = mpath.read_bytes()
    try:
        manifest = RoundManifest.model_validate_json(raw)
    except ValueError as exc:
        raise ConfigError(f"{mpath} is not a valid round manifest: {exc}") from exc
    if verify:
        verify_round(d, manifest)
    return LoadedRound(d, manifest, hashlib.sha256(raw).hexdigest())
