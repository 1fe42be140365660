"""Writing and reading a citation-cloze round in the project's one round format.

Layout (as for writing rounds, `rounds/export.py` conventions reused): `data/<config>/<split>.parquet` and
`jsonl/<config>/<split>.jsonl` per level (`citation_cloze-easy`, …), `templates/` (the templates the prompts
were rendered with), `stats.json`, `README.md` (dataset card with the `configs:` YAML header) and
`manifest.json` (a `RoundManifest` with the sha256 of every other file). `rounds.io.load_round` reads and
verifies the manifest; `load_items` streams the items.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from academiceval.families.cloze.models import TASK, ClozeItem
from academiceval.families.cloze.prompt import template_files
from academiceval.families.cloze.samples import item_to_sample, sample_to_item
from academiceval.rounds.export import card_header
from academiceval.store.artifacts import DATASET_CARD, SPLITS, TEMPLATES, LoadedRound, data_paths, write_manifest
from academiceval.store.models import ConfigInfo, RoundManifest
from academiceval.store.publisher import publishing

EMPTY_HINT = "no question could be made: see the skip reasons per level (they are printed and kept in the manifest)"


def config_name(preset: str) -> str:
    return f"{TASK}-{preset}"


def write_items(round_dir: Path, config: str, items: list[ClozeItem]) -> ConfigInfo:
    """Items of one config as round samples (`samples.item_to_sample`), parquet + JSONL per split."""
    info = ConfigInfo(task=TASK, setting=config.removeprefix(f"{TASK}-"), setting_name=config)
    by_split: dict[str, list[ClozeItem]] = {}
    for it in items:
        by_split.setdefault(it.split, []).append(it)
    for split in SPLITS:
        rows = by_split.get(split)
        if not rows:
            continue
        samples = [item_to_sample(it, config) for it in rows]
        pq_rel, js_rel = data_paths(config, split)
        for rel in (pq_rel, js_rel):
            (round_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            info.files.append(rel)
        table = pa.Table.from_pylist([s.model_dump() for s in samples])
        pq.write_table(table, round_dir / pq_rel, compression="zstd")
        with (round_dir / js_rel).open("w", encoding="utf-8") as f:
            for s in samples:
                f.write(s.model_dump_json() + "\n")
        info.counts[split] = len(rows)
    toks = [it.input_tokens for it in items if it.input_tokens is not None]
    info.mean_input_tokens = round(sum(toks) / len(toks), 1) if toks else 0.0
    info.mean_label_tokens = 1.0
    return info


def cloze_card(manifest: RoundManifest, stats: dict[str, object]) -> str:
    lines = card_header(manifest, f"academiceval citation cloze round {manifest.round}", ["multiple-choice"])
    lines += [
        "",
        f"# academiceval citation cloze round `{manifest.round}`",
        "",
        "Each item is a real paper with exactly one citation replaced by a placeholder and four candidate",
        "references taken from the paper's own reference list, each given with its text; the model answers",
        "with the candidate's number in `<answer>…</answer>`. Built the way SCALAR builds its questions",
        "(presets easy / medium / hard), from papers newer than the round's cutoff.",
        "",
        f"- live cutoff: question papers after {manifest.build_options.get('cutoff')}",
        f"- seed: {manifest.seed}; package version {manifest.package_version}",
        "",
        "| config | items | mean input tokens |",
        "|---|---:|---:|",
    ]
    for name, info in sorted(manifest.configs.items()):
        lines.append(f"| {name} | {sum(info.counts.values())} | {info.mean_input_tokens:.0f} |")
    slots = stats.get("gold_slots") if isinstance(stats, dict) else None
    if slots:
        lines += ["", f"Gold slot counts per level: `{json.dumps(slots, sort_keys=True)}`"]
    lines += [
        "",
        "Load: `academiceval.families.cloze.export.load_items(dir, config)`; `manifest.json` lists the sha256",
        "of every file.",
        "",
    ]
    return "\n".join(lines)


def write_round(
    final: Path,
    manifest: RoundManifest,
    items_by_config: dict[str, list[ClozeItem]],
    stats: dict[str, object],
    templates_dir: str | Path | None,
    *,
    force: bool = False,
    home: str | Path | None = None,
    protect: Iterable[str | Path] = (),
) -> RoundManifest:
    """Write the round through the one publisher (`store.publisher.publishing`: an existing round is refused unless
    `force`; the workspace `home` and the inputs in `protect` are never overwritten): samples per config,
    templates, stats, card, then the manifest with every file's sha256."""
    with publishing(final, force=force, home=home, protect=protect, empty_hint=EMPTY_HINT) as tmp:
        for cfg, items in sorted(items_by_config.items()):
            if items:
                info = write_items(tmp, cfg, items)
                manifest.configs[cfg] = info
                manifest.counts[cfg] = dict(info.counts)
        tdir = tmp / TEMPLATES
        tdir.mkdir()
        for name, path in template_files(templates_dir).items():
            shutil.copyfile(path, tdir / name)
        (tmp / "stats.json").write_text(
            json.dumps(stats, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
        )
        (tmp / DATASET_CARD).write_text(cloze_card(manifest, stats), encoding="utf-8")
        write_manifest(tmp, manifest)
    return manifest


def load_items(loaded: LoadedRound, config: str | None = None, *, split: str | None = None) -> Iterator[ClozeItem]:
    """Items of one cloze config (all cloze configs when None), in split order, through the round reader."""
    names = [c for c in loaded.configs() if loaded.manifest.configs[c].task == TASK] if config is None else [config]
    for name in names:
        for s in loaded.samples(name, split=split):
            yield sample_to_item(s)
