"""Publishing a built round: config names from measured lengths, parquet/JSONL export, templates, dataset card,
release notes against a previous round, sha256 of every file — written into the publisher's staging directory
(`store.publisher.publishing` checks, fsyncs and renames it into place)."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from academiceval import __version__
from academiceval.rounds.config import BuildConfig
from academiceval.rounds.export import StagingWriter, dataset_card
from academiceval.rounds.prompts import template_files
from academiceval.rounds.settings import SettingSpec, setting_names
from academiceval.store.artifacts import (
    DATASET_CARD,
    TEMPLATES,
    LoadedRound,
    load_round,
    write_manifest,
    write_round_config,
)
from academiceval.store.models import ConfigInfo, RoundManifest, Sample, SplitWindows, Task
from academiceval.store.tasks import task_spec
from academiceval.store.workspace import Workspace


@dataclass
class Staged:
    """What the sample stage of a build leaves for publishing: staged samples per task-setting in `tmp`, their
    token sums and split counts, the windows, and the skip/note counters."""

    tmp: Path
    staging: StagingWriter
    specs: Sequence[SettingSpec]
    tasks: Sequence[Task]
    windows: SplitWindows
    token_sums: dict[tuple[Task, str], list[int]] = field(default_factory=dict)
    split_counts: dict[tuple[Task, str], Counter[str]] = field(default_factory=dict)
    skipped: dict[str, Counter[str]] = field(default_factory=dict)
    notes: dict[str, Counter[str]] = field(default_factory=dict)


def publish(
    ws: Workspace,
    name: str,
    staged: Staged,
    config: BuildConfig,
    *,
    observed: dict[str, object],
    say: Callable[[str, int, int | None], None],
) -> RoundManifest:
    """Write the staged samples as the round's files into `staged.tmp` (the publisher's staging directory, which
    `store.publisher.publishing` then renames into place) and return its manifest, which keeps `config` verbatim
    and what the build `observed` (co-author source, citation resolution, ...)."""
    tmp, staging, specs, tasks = staged.tmp, staged.staging, staged.specs, staged.tasks
    token_sums, split_counts = staged.token_sums, staged.split_counts
    manifest = RoundManifest(
        round=name,
        created_at=_created_at(),
        package_version=__version__,
        seed=config.seed,
        windows=staged.windows,
        build_options=dict(observed),
        skipped={k: dict(sorted(v.items())) for k, v in sorted(staged.skipped.items())},
        notes={k: dict(sorted(v.items())) for k, v in sorted(staged.notes.items())},
        config=config.stored(),
    )
    for task in tasks:
        measured = [
            (s, sum(token_sums[(task, s.spec)]) / len(token_sums[(task, s.spec)]))
            for s in specs
            if token_sums.get((task, s.spec))
        ]
        names = setting_names(task, [s for s, _ in measured])
        for spec, mean in measured:
            cfg = names[spec.spec]
            key = f"{task}/{spec.spec}"
            samples = staging.read(key)
            labels: list[int] = []
            info = ConfigInfo(
                task=task,
                setting=spec.spec,
                setting_name=cfg,
                counts={k: v for k, v in sorted(split_counts[(task, spec.spec)].items())},
                mean_input_tokens=round(mean, 1),
            )

            def tap(it: Iterator[Sample], labels: list[int] = labels) -> Iterator[Sample]:
                for s in it:
                    labels.append(s.label_tokens or 0)
                    yield s

            say(f"export {cfg}", 0, 1)
            write_round_config(tmp, info, tap(samples), task_spec(task).input_fields)
            say(f"export {cfg}", 1, 1)
            info.mean_label_tokens = round(sum(labels) / len(labels), 1) if labels else 0.0
            manifest.configs[cfg] = info
            manifest.counts[cfg] = dict(info.counts)
    shutil.rmtree(tmp / ".staging", ignore_errors=True)
    tdir = tmp / TEMPLATES
    tdir.mkdir(parents=True, exist_ok=True)
    for tname, path in template_files(config.templates_dir).items():
        shutil.copyfile(path, tdir / tname)
    if config.previous is not None:
        _diff_previous(manifest, tmp, config.previous, ws)
    (tmp / DATASET_CARD).write_text(dataset_card(manifest), encoding="utf-8")
    write_manifest(tmp, manifest)
    return manifest


def _created_at() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    return when.isoformat(timespec="seconds")


def _diff_previous(manifest: RoundManifest, tmp: Path, previous: str, ws: Workspace) -> None:
    """LiveBench-style release notes on the test split: which test samples are new, which were retired."""
    old = load_round(ws.layout.find_round(previous), verify=True)
    new = LoadedRound(tmp, manifest, "")
    old_ids = {s.sample_id for s in old.samples(split="test")}
    new_ids = {s.sample_id for s in new.samples(split="test")}
    manifest.previous_round = old.name
    manifest.adds = sorted(new_ids - old_ids)
    manifest.retires = sorted(old_ids - new_ids)
