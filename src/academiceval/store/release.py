"""The layout of a published round (`academiceval release ROUND OUT`): the one writer and reader of a release.

A release is a round directory a dataset hub can host as it is:

    OUT/README.md            dataset card; its YAML header lists every config's parquet files, so
                             `datasets.load_dataset(OUT, CONFIG)` loads a config
    OUT/data/CONFIG/SPLIT.parquet
    OUT/templates/           the prompt templates (runs re-render prompts from the samples' fields)
    OUT/LICENSES.md          licence notes per source of the papers
    OUT/SHA256SUMS           `sha256sum -c SHA256SUMS` checks every file
    OUT/manifest.json        the round's manifest, its files re-hashed, plus `release` (what is withheld)

LiveBench-style, a release may withhold the labels of some splits (by default the newest test window): the
samples are there with their inputs, `label` is empty and `label_tokens` null, and `manifest.release` says so.
`load_round(OUT)` reads a release like any round, so `academiceval run` runs it; scoring a withheld sample says
the label is withheld (`label_withheld`).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from academiceval.store.artifacts import (
    CHECKSUMS,
    DATASET_CARD,
    MANIFEST,
    TEMPLATES,
    LoadedRound,
    data_paths,
    file_sha256,
    write_manifest,
)
from academiceval.store.models import RoundManifest, Sample
from academiceval.store.publisher import publishing

LICENSES = "LICENSES.md"


@dataclass
class ReleaseResult:
    out: Path
    configs: list[str]
    samples: int = 0
    withheld: int = 0  # samples whose label is withheld
    withheld_splits: list[str] = field(default_factory=list)
    files: int = 0


def label_withheld(manifest: RoundManifest, sample: Sample) -> bool:
    """Whether a sample's empty label is withheld by a release (not a round without the sample)."""
    rel = manifest.release or {}
    return sample.split in rel.get("withheld_splits", []) and not sample.label


def _blank_labels(table: pa.Table) -> pa.Table:
    n = table.num_rows
    i = table.schema.get_field_index("label")
    table = table.set_column(i, "label", pa.array([""] * n, pa.string()))
    j = table.schema.get_field_index("label_tokens")
    return table.set_column(j, "label_tokens", pa.nulls(n, pa.int64()))


def write_release(
    round: LoadedRound,
    out: Path,
    *,
    withhold_splits: Sequence[str],
    card: str,
    licences: str,
    release_info: dict[str, Any] | None = None,
    force: bool = False,
    home: Path | None = None,
) -> ReleaseResult:
    """Write `round` as a release into `out` through the one publisher (`store.publisher.publishing`): refused when
    `out` is, contains or lies inside the round or the workspace `home`, or already holds files (unless `force`,
    and then only a release or round academiceval wrote is replaced)."""
    out = Path(out)
    res = ReleaseResult(out=out, configs=round.configs(), withheld_splits=sorted(withhold_splits))
    with publishing(out, force=force, home=home, protect=[round.path], what="release") as tmp:
        _write(round, tmp, res, card=card, licences=licences, release_info=release_info)
    return res


def _write(
    round: LoadedRound,
    tmp: Path,
    res: ReleaseResult,
    *,
    card: str,
    licences: str,
    release_info: dict[str, Any] | None,
) -> None:
    manifest = round.manifest.model_copy(deep=True)
    manifest.files = {}
    withhold_splits = res.withheld_splits
    for name in res.configs:
        info = manifest.configs[name]
        kept: list[str] = []
        for rel in info.files:
            if not rel.endswith(".parquet"):
                continue  # the JSONL copies stay with the round: one format per release
            split = Path(rel).stem
            table = pq.read_table(round.path / rel)
            res.samples += table.num_rows
            if split in withhold_splits:
                table = _blank_labels(table)
                res.withheld += table.num_rows
            assert rel == data_paths(name, split)[0]
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, tmp / rel, compression="zstd")
            kept.append(rel)
        info.files = kept
    if round.templates_dir is not None:
        shutil.copytree(round.templates_dir, tmp / TEMPLATES)
    (tmp / DATASET_CARD).write_text(card, encoding="utf-8")
    (tmp / LICENSES).write_text(licences, encoding="utf-8")
    manifest.release = {
        "released_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "withheld_splits": res.withheld_splits,
        "withheld_samples": res.withheld,
        "source_manifest_sha256": round.manifest_sha256,
        **(release_info or {}),
    }
    write_manifest(tmp, manifest)
    sums = {**manifest.files, MANIFEST: file_sha256(tmp / MANIFEST)}
    (tmp / CHECKSUMS).write_text("".join(f"{h}  {p}\n" for p, h in sorted(sums.items())), encoding="utf-8")
    res.files = len(sums) + 1


def verify_checksums(out: Path) -> list[str]:
    """Files whose sha256 differs from SHA256SUMS (empty: all good), as `sha256sum -c` would report them."""
    bad = []
    for line in (Path(out) / CHECKSUMS).read_text(encoding="utf-8").splitlines():
        digest, rel = line.split("  ", 1)
        p = Path(out) / rel
        if not p.is_file() or hashlib.sha256(p.read_bytes()).hexdigest() != digest:
            bad.append(rel)
    return bad
