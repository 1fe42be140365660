"""Reading a round for a run: resolve its directory, verify every file against the manifest, list samples.

The rounds area owns the round format (`rounds.io.load_round`); this module uses it when present and
otherwise reads the documented layout itself (`manifest.json` whose `files` map relative paths to sha256,
samples as JSONL or parquet rows of `Sample`). Either way a file whose sha256 no longer matches is refused
before any request is sent, naming the file: scores on a silently changed round would not be comparable.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.rounds.models import RoundManifest, Sample
from academiceval.runs.errors import RoundIntegrityError

MANIFEST = "manifest.json"


@dataclass
class RoundView:
    path: Path
    manifest: RoundManifest
    manifest_sha256: str
    samples: list[Sample] = field(default_factory=list)
    loader: str = ""

    @property
    def name(self) -> str:
        return self.manifest.round

    @property
    def templates_dir(self) -> Path | None:
        """The templates copied into the round at build time: prompts are rendered with these, not the package's."""
        d = self.path / "templates"
        return d if d.is_dir() else None


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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


def verify_files(round_dir: Path, manifest: RoundManifest) -> None:
    for rel, expected in sorted(manifest.files.items()):
        p = (round_dir / rel).resolve()
        if round_dir.resolve() not in p.parents:
            raise RoundIntegrityError(f"manifest lists a file outside the round: {rel!r}", source=str(round_dir))
        if not p.is_file():
            raise RoundIntegrityError(f"round file {rel} is missing", source=str(round_dir))
        actual = file_sha256(p)
        if actual != expected:
            raise RoundIntegrityError(
                f"round file {rel} has sha256 {actual[:12]}… but the manifest says {expected[:12]}…",
                source=str(round_dir),
                hint="the round was modified after it was built; rebuild it or restore the file",
            )


def _read_samples_file(p: Path) -> list[Sample]:
    if p.suffix == ".jsonl":
        with p.open("rb") as f:
            return [Sample.model_validate_json(line) for line in f if line.strip()]
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(p).to_pylist()
        out = []
        for r in rows:
            for k in ("fields", "citations", "demos"):
                if isinstance(r.get(k), str):
                    r[k] = json.loads(r[k])
            out.append(Sample.model_validate(r))
        return out
    return []


def _fallback_load(round_dir: Path, verify: bool) -> RoundView:
    mpath = round_dir / MANIFEST
    if not mpath.is_file():
        raise ConfigError(f"{round_dir} has no {MANIFEST}", hint="is this a round directory made by `build`?")
    raw = mpath.read_bytes()
    manifest = RoundManifest.model_validate_json(raw)
    if verify:
        verify_files(round_dir, manifest)
    samples: list[Sample] = []
    jsonl = [r for r in manifest.files if r.endswith(".jsonl")]
    parquet = [r for r in manifest.files if r.endswith(".parquet")]
    for rel in sorted(jsonl or parquet):  # one format is enough when both are exported
        try:
            samples.extend(_read_samples_file(round_dir / rel))
        except (ValueError, KeyError) as e:
            if "sample" in rel.lower():
                raise ConfigError(f"round file {rel} does not hold samples: {e}", source=str(round_dir)) from None
    return RoundView(round_dir, manifest, hashlib.sha256(raw).hexdigest(), samples, loader="runs.source(fallback)")


def load_round_view(round_dir: Path, *, verify: bool = True) -> RoundView:
    try:
        io = importlib.import_module("academiceval.rounds.io")
        load_round = io.load_round
    except (ImportError, AttributeError):
        return _fallback_load(round_dir, verify)
    try:
        rnd = load_round(round_dir, verify=verify)
    except RoundIntegrityError:
        raise
    except AcademicEvalError as e:
        if getattr(e, "code", "") == "round_integrity":  # the rounds area's own class: re-raise as a ConfigError
            raise RoundIntegrityError(e.message, source=e.source, hint=e.hint) from None
        raise
    samples: list[Sample] = []
    seen: set[str] = set()
    for config in rnd.configs():
        for s in rnd.samples(config):
            if s.sample_id not in seen:
                seen.add(s.sample_id)
                samples.append(s)
    return RoundView(round_dir, rnd.manifest, rnd.manifest_sha256, samples, loader="rounds.io.load_round")
