"""Writing a round to disk: parquet + JSONL per config and split, streamed in batches; dataset card; hashes.

Nothing is held for the whole round: samples go to a staging JSONL per task-setting as they are built, and are
copied (with their final config name, known only once mean lengths are measured) into parquet through a
`pyarrow.parquet.ParquetWriter` batch by batch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from academiceval.rounds.models import ConfigInfo, RoundManifest, Sample, Task
from academiceval.rounds.tasks import TASK_FIELDS

SPLITS = ("train", "val", "test")
BATCH = 32


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def arrow_schema(task: Task) -> pa.Schema:
    fields_t = pa.struct([(k, pa.string()) for k in TASK_FIELDS[task]])
    demo_t = pa.struct(
        [
            ("arxiv_id", pa.string()),
            ("published", pa.date32()),
            ("fields", fields_t),
            ("label", pa.string()),
            ("origin", pa.string()),
            ("paper_id", pa.string()),
            ("date_precision", pa.string()),
            ("shared_authors", pa.list_(pa.string())),
        ]
    )
    cite_t = pa.struct(
        [("arxiv_id", pa.string()), ("title", pa.string()), ("abstract", pa.string()), ("distractor", pa.bool_())]
    )
    return pa.schema(
        [
            ("sample_id", pa.string()),
            ("round", pa.string()),
            ("task", pa.string()),
            ("setting", pa.string()),
            ("setting_name", pa.string()),
            ("split", pa.string()),
            ("arxiv_id", pa.string()),
            ("paper_id", pa.string()),
            ("published", pa.date32()),
            ("date_precision", pa.string()),
            ("primary_category", pa.string()),
            ("fields", fields_t),
            ("citations", pa.list_(cite_t)),
            ("demos", pa.list_(demo_t)),
            ("label", pa.string()),
            ("prompt_sha256", pa.string()),
            ("seed", pa.int64()),
            ("input_tokens", pa.int64()),
            ("label_tokens", pa.int64()),
        ]
    )


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


def data_paths(config: str, split: str) -> tuple[str, str]:
    return f"data/{config}/{split}.parquet", f"jsonl/{config}/{split}.jsonl"


def write_config(round_dir: Path, info: ConfigInfo, samples: Iterator[Sample]) -> None:
    """Stream samples (already in split order) into parquet and JSONL files, one pair per split."""
    schema = arrow_schema(info.task)
    cur_split: str | None = None
    pw: pq.ParquetWriter | None = None
    jf: IO[str] | None = None
    batch: list[dict[str, object]] = []

    def flush() -> None:
        if batch and pw is not None:
            pw.write_table(pa.Table.from_pylist(batch, schema=schema))
            batch.clear()

    def close() -> None:
        flush()
        if pw is not None:
            pw.close()
        if jf is not None:
            jf.close()

    try:
        for s in samples:
            s = s.model_copy(update={"setting_name": info.setting_name})
            if s.split != cur_split:
                close()
                cur_split = s.split
                pq_rel, js_rel = data_paths(info.setting_name, s.split)
                for rel in (pq_rel, js_rel):
                    (round_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                    info.files.append(rel)
                pw = pq.ParquetWriter(round_dir / pq_rel, schema, compression="zstd")
                jf = (round_dir / js_rel).open("w", encoding="utf-8")
            assert jf is not None
            jf.write(s.model_dump_json() + "\n")
            batch.append(s.model_dump())
            if len(batch) >= BATCH:
                flush()
    finally:
        close()


def dataset_card(manifest: RoundManifest) -> str:
    """README.md with a YAML header declaring every config, so `datasets.load_dataset(dir, config)` works."""
    lines = [
        "---",
        f"pretty_name: academiceval round {manifest.round}",
        "language:",
        "- en",
        "task_categories:",
        "- summarization",
        "- text-generation",
        "configs:",
    ]
    for name, info in sorted(manifest.configs.items()):
        lines += [f"- config_name: {name}", "  data_files:"]
        for split in SPLITS:
            rel = data_paths(name, split)[0]
            if rel in info.files:
                lines += [f"  - split: {split}", f"    path: {rel}"]
    lines += ["---", "", f"# academiceval round `{manifest.round}`", ""]
    w = manifest.windows
    lines += [
        "A dated round of the academiceval long-context writing benchmark: every label is real text from an arXiv",
        "paper (its title, abstract, introduction or related-work section); test papers are newer than the",
        "training and validation windows. Samples keep their input fields, so any model can re-render the prompt",
        "with the templates in `templates/`.",
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
        "`academiceval.rounds.io.load_round(dir).samples(config)`. `manifest.json` lists the sha256 of every file.",
        "",
    ]
    return "\n".join(lines)


def manifest_json(manifest: RoundManifest) -> str:
    return json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
