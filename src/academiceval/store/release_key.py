"""The private key of a release (`academiceval release`): the withheld samples in full, by release id, kept in
the creator's workspace (`store.artifacts.Layout.release_key`: `release-keys/ROUND/<release manifest sha256>.key.jsonl`,
0600) and never in the release. `store.release` stages it while the release is published; `scores.labels` reads it
to score a submission on the withheld papers in that workspace.

One JSONL file: a `ReleaseKeyHeader` line, then one `KeyEntry` per withheld (release id, config).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from academiceval.store.artifacts import MANIFEST, ArtifactError, Layout, LoadedRound
from academiceval.store.hashing import sha256_file
from academiceval.store.models import RoundManifest, Sample
from academiceval.store.secrets import private_file

KEY_FORMAT = "academiceval-release-key/1"


class ReleaseKeyHeader(BaseModel):
    """The first line of a release key: which release it unlocks and which round it was made from."""

    format: str = KEY_FORMAT
    round: str
    release_manifest_sha256: str  # what `run.json` of a run on the release records as its round manifest
    source_manifest_sha256: str  # the full round the release was made from
    released_at: str
    release_dir: str  # where the release was written (the public samples' labels are there too)
    withheld_samples: int


class KeyEntry(BaseModel):
    """One withheld sample: its release id, its config, and the full sample (label, seed, real id)."""

    release_id: str
    config: str
    sample: Sample


@dataclass
class ReleaseKey:
    path: Path
    header: ReleaseKeyHeader
    entries: list[KeyEntry]

    def by_id(self) -> dict[str, Sample]:
        """Full samples by release id and by their own id (a submission made on a rebuilt round names them so)."""
        out: dict[str, Sample] = {}
        for e in self.entries:
            out[e.release_id] = e.sample
            out.setdefault(e.sample.sample_id, e.sample)
        return out


def stage_key(
    home: Path, round: LoadedRound, manifest: RoundManifest, staging: Path, out: Path, withheld: list[Any]
) -> Path:
    """Write the key beside its final name (a dot file), 0600; renamed once the release is in place."""
    sha = sha256_file(staging / MANIFEST)
    path = Layout.of(home).release_key(round.name, sha)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(".*.key.jsonl"):  # staged by a killed release: kept only if that release exists
        try:
            published = (Path(read_key(stale).header.release_dir) / MANIFEST).is_file()
        except ArtifactError:  # torn: killed while it was written, before its release could be published
            published = False
        if not published:
            stale.unlink(missing_ok=True)
    tmp = path.with_name("." + path.name)
    header = ReleaseKeyHeader(
        round=round.name,
        release_manifest_sha256=sha,
        source_manifest_sha256=round.manifest_sha256,
        released_at=str((manifest.release or {}).get("released_at", "")),
        release_dir=str(out.resolve()),
        withheld_samples=len(withheld),
    )
    seen: set[tuple[str, str]] = set()
    private_file(tmp)
    with tmp.open("w", encoding="utf-8") as f:
        f.write(header.model_dump_json() + "\n")
        for rid, config, s in withheld:
            if (rid, config) in seen:
                continue
            seen.add((rid, config))
            f.write(KeyEntry(release_id=rid, config=config, sample=s).model_dump_json() + "\n")
        f.flush()
        os.fsync(f.fileno())
    return tmp


def read_key(path: Path) -> ReleaseKey:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    try:
        header = ReleaseKeyHeader.model_validate_json(lines[0])
        entries = [KeyEntry.model_validate_json(line) for line in lines[1:] if line.strip()]
    except (IndexError, ValidationError, ValueError) as e:
        raise ArtifactError(f"release key {path} is not readable ({type(e).__name__})", source=str(path)) from None
    return ReleaseKey(Path(path), header, entries)


def find_key(home: str | Path | None, round_name: str, release_manifest_sha256: str) -> ReleaseKey | None:
    """The private key of the release of `round_name` whose manifest has this sha256, if this workspace made it."""
    if home is None or not release_manifest_sha256:
        return None
    path = Layout.of(home).release_key(round_name, release_manifest_sha256)
    staged = path.with_name("." + path.name)
    if not path.is_file() and staged.is_file():
        # the release was renamed into place and the run killed before its key was: the staged key was written
        # and fsynced before the release was published, and its name is this release's manifest hash: adopt it
        staged.rename(path)
    return read_key(path) if path.is_file() else None
