"""What a round adds around its samples while it is built: the staging files and the dataset card.

Nothing is held for the whole round: samples go to a staging JSONL per task-setting as they are built, and are
copied (with their final config name, known only once mean lengths are measured) into the round's parquet and
JSONL files by `store.artifacts.write_round_config`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

from academiceval.store.artifacts import MANIFEST, SPLITS, TEMPLATES, data_paths
from academiceval.store.models import RoundManifest, Sample


class StagingWriter:
    """Append-only JSONL per task-setting while building (one line per sample)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, IO[str]] = {}

    def path(self, key: str) -> Path:
        return self.root / (key.replace("/", "__").replace(":", "-").replace("+", "_") + ".jsonl")

    def write(self, key: str, sample: Sample) -> None:
        f = self._files.get(key)
        if f is None:
            f = self._files[key] = self.path(key).open("w", encoding="utf-8")
        f.write(sample.model_dump_json() + "\n")

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()

    def read(self, key: str) -> Iterator[Sample]:
        p = self.path(key)
        if not p.exists():
            return
        with p.open(encoding="utf-8") as f:
            for line in f:
                yield Sample.model_validate_json(line)


def card_header(manifest: RoundManifest, pretty_name: str, categories: list[str]) -> list[str]:
    """The YAML header of a round's README.md: one entry per config with its parquet file per split — what
    `datasets.load_dataset(dir, config)` reads. Every family's card starts with it."""
    lines = ["---", f"pretty_name: {pretty_name}", "language:", "- en", "task_categories:"]
    lines += [f"- {c}" for c in categories]
    lines.append("configs:")
    for name, info in sorted(manifest.configs.items()):
        lines += [f"- config_name: {name}", "  data_files:"]
        for split in SPLITS:
            rel = data_paths(name, split)[0]
            if rel in info.files:
                lines += [f"  - split: {split}", f"    path: {rel}"]
    return [*lines, "---"]


def dataset_card(manifest: RoundManifest) -> str:
    """README.md with a YAML header declaring every config, so `datasets.load_dataset(dir, config)` works."""
    lines = card_header(manifest, f"academiceval round {manifest.round}", ["summarization", "text-generation"])
    lines += ["", f"# academiceval round `{manifest.round}`", ""]
    w = manifest.windows
    lines += [
        "A dated round of the academiceval long-context writing benchmark: every label is real text from an arXiv",
        "paper (its title, abstract, introduction or related-work section); test papers are newer than the",
        "training and validation windows. Samples keep their input fields, so any model can re-render the prompt",
        f"with the templates in `{TEMPLATES}/`.",
        "",
        f"- train: papers up to {w.train_until}",
        f"- val: {w.val_from} … {w.val_until}",
        f"- test: {w.test_from} … {w.test_until}",
        f"- seed: {manifest.seed}; package version {manifest.package_version}",
        "",
        "| config | task | setting | train | val | test | mean input tokens | mean label tokens |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, info in sorted(manifest.configs.items()):
        c = info.counts
        lines.append(
            f"| {name} | {info.task} | {info.setting} | {c.get('train', 0)} | {c.get('val', 0)} | {c.get('test', 0)} "
            f"| {info.mean_input_tokens:.0f} | {info.mean_label_tokens:.0f} |"
        )
    lines += [
        "",
        'Load one config offline: `datasets.load_dataset("<this directory>", "<config>")`, or with the package:',
        f"`academiceval.store.artifacts.load_round(dir).samples(config)`. `{MANIFEST}` lists the sha256 of every file.",
        "",
    ]
    return "\n".join(lines)
