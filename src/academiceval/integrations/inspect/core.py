"""What the inspect tasks are made of, without importing inspect_ai: the samples of one round × task × setting ×
split, their prompts, and one answer scored by a registry metric exactly as `academiceval score` scores it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from academiceval.errors import ConfigError
from academiceval.integrations.scoring import MetricScorer, clean_output, headline
from academiceval.rounds.prompts import render_prompt
from academiceval.store.artifacts import Layout, LoadedRound, load_round
from academiceval.store.hashing import sha256_hex
from academiceval.store.models import Sample
from academiceval.store.tasks import max_new_tokens
from academiceval.store.workspace import resolve_home

__all__ = [
    "MetricScorer",
    "Selection",
    "as_metadata",
    "clean_output",
    "find_round",
    "headline",
    "select",
]


@dataclass
class Selection:
    """One round × task × setting × split: the samples and how to render them."""

    round: LoadedRound
    task: str
    setting: str
    split: str
    samples: list[Sample]

    def prompt(self, sample: Sample) -> str:
        """The prompt `academiceval run` sends without a context budget (the round's own templates)."""
        return render_prompt(sample, templates_dir=self.round.templates_dir)

    @property
    def max_tokens(self) -> int:
        return max_new_tokens(self.task)

    @property
    def labelled(self) -> bool:
        """False when a release withholds these labels (then there is nothing to score against)."""
        return all(s.label for s in self.samples)


def find_round(layout: Layout, round: str | None) -> Path:
    """The round directory a task runs on: `round` (a name under HOME/rounds or a directory), or, when none is
    given, the workspace's only round; several or none is a ConfigError that names them and how to pick one."""
    if round:
        return layout.find_round(round)
    known = layout.known_rounds()
    if len(known) == 1:
        return layout.find_round(known[0])
    if not known:
        raise ConfigError(
            f"no round in the workspace {layout.home}",
            hint="build one (`academiceval demo`, `academiceval build --round NAME`), or pass -T home=DIR / "
            "-T round=DIR",
        )
    raise ConfigError(
        f"the workspace {layout.home} has {len(known)} rounds: {', '.join(known)}",
        hint=f"pick one with -T round=NAME, e.g. -T round={known[-1]}",
    )


def select(
    round: str | None,
    task: str,
    *,
    setting: str | None = "zero-shot",
    split: str = "test",
    home: str | Path | None = None,
) -> Selection:
    """The samples of `task` in `setting` (every setting when empty) and `split` of a round (a name under
    HOME/rounds or a directory; None: the workspace's only round)."""
    layout = Layout.of(resolve_home(home))
    loaded = load_round(find_round(layout, round))
    configs = [
        c
        for c, info in loaded.manifest.configs.items()
        if info.task == task and (not setting or info.setting == setting)
    ]
    if not configs:
        have = sorted({(i.task, i.setting) for i in loaded.manifest.configs.values()})
        raise ConfigError(
            f"round {loaded.name} has no {task} samples in setting {setting!r}",
            hint="available (task, setting): " + ", ".join(f"{t} {s}" for t, s in have),
        )
    samples = [s for c in sorted(configs) for s in loaded.samples(c, split=split)]
    if not samples:
        raise ConfigError(f"round {loaded.name} has no {task} {setting} samples in split {split!r}")
    return Selection(loaded, task, setting or "all", split, samples)


def as_metadata(sample: Sample, prompt: str) -> dict[str, Any]:
    return {
        "round": sample.round,
        "task": sample.task,
        "setting": sample.setting,
        "split": sample.split,
        "arxiv_id": sample.arxiv_id,
        "published": sample.published.isoformat(),
        "prompt_sha256": sha256_hex(prompt),
    }
