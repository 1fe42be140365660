"""What the inspect tasks are made of, without importing inspect_ai: the samples of one round × task × setting ×
split, their prompts, and one answer scored by a registry metric exactly as `academiceval score` scores it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from academiceval import __version__
from academiceval.errors import ConfigError
from academiceval.models.postprocess import postprocess
from academiceval.rounds.models import Sample
from academiceval.rounds.prompts import render_prompt
from academiceval.runs.models import RunSpec
from academiceval.runs.prepare import sha256_text
from academiceval.scores import registry
from academiceval.scores.config import ScoreConfig
from academiceval.scores.models import ScoreRecord
from academiceval.scores.registry import MetricOptions, RunJob
from academiceval.store.artifacts import Layout, LoadedRound, load_round, new_record
from academiceval.store.tasks import max_new_tokens
from academiceval.store.workspace import resolve_home


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


def select(
    round: str, task: str, *, setting: str | None = "zero-shot", split: str = "test", home: str | Path | None = None
) -> Selection:
    """The samples of `task` in `setting` (every setting when empty) and `split` of a round (a name under
    HOME/rounds or a directory)."""
    layout = Layout.of(resolve_home(home))
    loaded = load_round(layout.find_round(round))
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


def clean_output(task: str, completion: str) -> str:
    """The answer as the runner stores it in `RunRecord.output` (models.postprocess)."""
    return postprocess(task, completion)


class MetricScorer:
    """A registry metric (e.g. rouge-l) applied to one answer at a time, through the same scorer class and
    RunJob path `score_runs` uses, so the values are those `academiceval score` writes."""

    def __init__(self, metric: str, config: ScoreConfig | None = None) -> None:
        self.metric = registry.get(metric)
        self.scorer = self.metric.build(MetricOptions(config=config or ScoreConfig(metrics=[metric])))

    @property
    def name(self) -> str:
        return self.metric.name

    def score(self, sample: Sample, completion: str, *, model: str = "inspect") -> ScoreRecord:
        output = clean_output(sample.task, completion)
        rec = new_record(
            sample_id=sample.sample_id,
            task=sample.task,
            setting=sample.setting,
            split=sample.split,
            arxiv_id=sample.arxiv_id,
            published=sample.published,
            prompt_sha256=sample.prompt_sha256 or "",
            output_raw=completion,
            output=output,
        )
        spec = RunSpec(
            round=sample.round,
            round_manifest_sha256="",
            model=model,
            backend="inspect",
            package_version=__version__,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        written: list[ScoreRecord] = []
        job = RunJob(
            spec=spec,
            run_dir=Path("."),
            samples={sample.sample_id: sample},
            recs=[rec],
            done=set(),
            emit=written.extend,
            read_run=lambda p: {},
            needs=self.metric.needs,
        )
        self.scorer.score_run(job)
        return written[-1]


def headline(record: ScoreRecord) -> float | None:
    """The value the leaderboard reports for a score record (F1 for ROUGE and BERTScore)."""
    if record.error:
        return None
    v = record.values
    return v.get("f", next(iter(v.values()), None))


def prompt_hash(text: str) -> str:
    return sha256_text(text)


def as_metadata(sample: Sample, prompt: str) -> dict[str, Any]:
    return {
        "round": sample.round,
        "task": sample.task,
        "setting": sample.setting,
        "split": sample.split,
        "arxiv_id": sample.arxiv_id,
        "published": sample.published.isoformat(),
        "prompt_sha256": prompt_hash(prompt),
    }
