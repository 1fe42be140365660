"""Metrics by name: `score_runs(metrics=[...])` looks each name up here and lets its scorer score a run.

A metric is registered once with what it needs and how to build its scorer; nothing else in `scores` knows
the list, so a new family (citation-cloze accuracy, L-Eval EM/F1/ROUGE, citation faithfulness) adds metrics by
registering them, without touching the scoring loop:

    from academiceval.scores.registry import Metric, Needs, register
    register(Metric("exact-match", build=lambda opts: ExactMatch(), needs=Needs(reference=True),
                    summary="1.0 when the normalized output equals the reference"))

and, if the module is not imported anyway, by adding it to `PLUGIN_MODULES` below (imported on first lookup).

`name` is what users type (`--metrics rouge-l,bertscore`); the scorer's `metric_name` is what its ScoreRecords
carry, and it may spell the configuration that matters (e.g. `bertscore-all-MiniLM-L6-v2-L6`,
`judge-gpt-4o-mini-vs-reference`), so results of different models/layers are never averaged together.
A scorer (`scores.scorer`: `SampleScorer`, `BatchScorer` or `AsyncScorer`) says how one sample (or a batch) is
scored; the loop around it — what is left to do, unusable records with their reason (no reference, generation
error), error records, writing as it goes, progress — is `scores.scorer.score_job`, the same for every metric.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from academiceval.errors import ConfigError
from academiceval.runs.models import RunRecord, RunSpec
from academiceval.scores.config import ScoreConfig
from academiceval.scores.models import ScoreRecord
from academiceval.scores.scorer import AnyScorer, done_key, output_sha
from academiceval.store.tasks import find_spec

# Modules that register metrics when imported (the built-ins first). A new family appends its module here.
PLUGIN_MODULES: tuple[str, ...] = (
    "academiceval.scores.builtin",
    "academiceval.scores.citations",
    "academiceval.scores.related_work_judge",
    "academiceval.scores.accuracy",
    "academiceval.scores.leval_metrics",
)


def default_metrics(tasks: Iterable[str]) -> list[str] | None:
    """The default metrics of a run whose records have these tasks — their protocols' own numbers
    (`TaskSpec.default_metrics`: multiple choice accuracy, L-Eval its per-task metric) — or None when any task
    declares none (the writing tasks: then the general default, ROUGE-L and BERTScore, applies)."""
    specs = [find_spec(t) for t in set(tasks)]
    if not specs or any(s is None or not s.default_metrics for s in specs):
        return None
    return sorted({m for s in specs if s is not None for m in s.default_metrics})


def added_defaults(tasks: Iterable[str], *, judge: bool = False) -> list[str]:
    """Metrics scored by default *besides* the general ones on a run with these tasks: those whose `default_for`
    accepts one of the tasks' specs (citation faithfulness on the tasks that carry a citation list); a metric that
    needs a judge only when one is given. In registration order."""
    specs = [s for s in (find_spec(t) for t in set(tasks)) if s is not None]
    return [
        m.name
        for m in (get(n) for n in names())
        if m.default_for is not None and (judge or not m.needs.judge) and any(m.default_for(s) for s in specs)
    ]


NOT_APPLICABLE = "not_applicable"  # RunRecord.error_code of a sample a probe does not apply to

Progress = Callable[[str, int, int], None]  # (description, done, total)


class Options(BaseModel):
    """Base of a metric's options model: typed, every field with a default, a misspelled option an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Needs:
    """What a metric needs besides the model's output (checked before any run is read)."""

    reference: bool = True  # the round's label (the paper's own text): a sample missing from the round is an error
    judge: bool = False  # a judge model: `score_runs(judge=...)` / `--judge SPEC` (checked before any run is read)
    batched: bool = False  # scores `batch_size` samples per call (a neural model) and writes chunk by chunk


@dataclass
class MetricOptions:
    """What a scorer is built from: the pass's `ScoreConfig` (metric options: BERTScore model/layer/idf/...,
    the judge's `against`) plus what cannot be stored in it (the judge backend, the response cache)."""

    config: ScoreConfig = field(default_factory=ScoreConfig)
    judge: Any = None  # a Backend (score_runs loads `config.judge` when none is passed in)
    cache: Any = None  # response cache for judge calls
    home: Path | None = None  # the workspace (default cache location)
    batch_size: int = 64

    def of(self, metric: str) -> Any:
        """The typed options of one metric (its `Metric.options` model over `config.options[metric]`)."""
        return metric_options(self.config, metric)


@dataclass
class RunJob:
    """One run directory as a scorer sees it: its records, their round samples, and where results go."""

    spec: RunSpec
    run_dir: Path
    samples: dict[str, Any]  # sample_id -> rounds Sample (label, fields)
    recs: list[RunRecord]  # sorted by (sample id, epoch): every epoch of a repeated run is scored
    done: set[tuple[str, str, str, Any]]  # (sample, metric, config hash, output sha[, epoch > 1]) already scored
    emit: Callable[[Sequence[ScoreRecord]], None]  # append to scores.jsonl (as we go: resumable)
    read_run: Callable[[Path], dict[str, RunRecord]]  # another run's records (pairwise metrics)
    progress: Progress | None = None
    skipped: dict[str, int] = field(default_factory=dict)  # metric name -> already scored
    needs: Needs = field(default_factory=Needs)  # of the metric being scored (set by score_runs before each)

    def todo(self, metric: str, chash: str) -> list[RunRecord]:
        """Records not yet scored with this metric configuration (or whose output changed since)."""
        # a probe that does not apply to a sample (title-only on a title) left nothing to score and is no error
        applicable = [r for r in self.recs if r.error_code != NOT_APPLICABLE]
        pending = [
            r
            for r in applicable
            if done_key(r.sample_id, metric, chash, output_sha(r.output), r.epoch) not in self.done
        ]
        self.skipped[metric] = self.skipped.get(metric, 0) + len(applicable) - len(pending)
        return pending

    def label_of(self, rec: RunRecord) -> str | None:
        s = self.samples.get(rec.sample_id)
        return None if s is None else s.label

    def record(self, rec: RunRecord, metric: str, chash: str, **kw: Any) -> ScoreRecord:
        """A ScoreRecord for `rec` (sample identity and date copied from the run record)."""
        return ScoreRecord(
            sample_id=rec.sample_id,
            task=rec.task,
            setting=rec.setting,
            split=rec.split,
            published=rec.published,
            date_precision=rec.date_precision,
            metric=metric,
            config_hash=chash,
            epoch=rec.epoch,
            **kw,
        )

    def unusable(self, rec: RunRecord, metric: str, chash: str) -> ScoreRecord | None:
        """A record that cannot be scored (no reference when the metric needs one, generation error): recorded with
        its reason."""
        label = self.label_of(rec)
        if self.needs.reference and label is None:
            why = f"sample {rec.sample_id} is not in round {self.spec.round}"
        elif self.needs.reference and not label:
            why = (
                f"label withheld: round {self.spec.round} was released without the labels of {rec.split}; "
                "score again with --round-dir of the round that has them"
            )
        elif rec.error or rec.skipped:
            why = f"no output to score: {rec.error or 'skipped (too long)'}"
        else:
            return None
        return self.record(rec, metric, chash, error=why, details={"output_sha256": output_sha(rec.output)})

    def tick(self, metric: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(f"{self.spec.model} {metric}", done, total)


Scorer = AnyScorer  # a built metric (scores.scorer): names its records, scores samples; the loop is score_job


@dataclass(frozen=True)
class Metric:
    """A registered metric: its user-facing name, what it needs, and how to build its scorer."""

    name: str
    build: Callable[[MetricOptions], Scorer]
    needs: Needs = field(default_factory=Needs)
    summary: str = ""
    options: type[BaseModel] | None = None  # its options (`--metric-arg NAME.OPTION=VALUE`), extra="forbid"
    # scored by default (with the general metrics) on runs with a task whose spec it accepts (`added_defaults`)
    default_for: Callable[[Any], bool] | None = None


_REGISTRY: dict[str, Metric] = {}
_loaded = False


def register(metric: Metric, *, replace: bool = False) -> Metric:
    """Add a metric; registering a taken name is an error unless `replace` (tests, user overrides)."""
    if metric.name in _REGISTRY and not replace and _REGISTRY[metric.name] is not metric:
        raise ConfigError(f"metric {metric.name!r} is already registered")
    _REGISTRY[metric.name] = metric
    return metric


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def _load_plugins() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in PLUGIN_MODULES:
            importlib.import_module(module)


def names() -> list[str]:
    """Every registered metric name, in registration order."""
    _load_plugins()
    return list(_REGISTRY)


def get(name: str) -> Metric:
    _load_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown metric {name!r}; known metrics: {', '.join(_REGISTRY)}", hint="pass --metrics with known names"
        ) from None


def metric_options(config: ScoreConfig, name: str) -> Any:
    """`config.options[name]` validated by the metric's options model (defaults filled in); a ConfigError naming
    the option for an unknown metric, an unknown option or a bad value."""
    metric = get(name)
    given = config.options.get(name) or {}
    if metric.options is None:
        if given:
            raise ConfigError(
                f"metric {name!r} takes no options (given: {', '.join(sorted(given))})",
                hint="drop the --metric-arg " + ", ".join(f"{name}.{k}" for k in sorted(given)),
            )
        return None
    try:
        return metric.options.model_validate(given)
    except ValidationError as e:
        bad = "; ".join(f"{name}.{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
        known = ", ".join(f"{name}.{k}" for k in metric.options.model_fields)
        raise ConfigError(f"invalid metric option(s): {bad}", hint=f"{name} takes {known}") from None


def check_options(config: ScoreConfig) -> None:
    """Every namespace of `config.options` names a metric and holds valid options (before any work)."""
    for name in config.options:
        metric_options(config, name)


def resolve(metrics: Iterable[str], *, judge: Any = None) -> list[Metric]:
    """The registered metrics for these names, checked against what they need (before any work)."""
    wanted = list(metrics)
    unknown = [m for m in wanted if m not in names()]
    if unknown:
        raise ConfigError(
            f"unknown metric(s) {', '.join(unknown)}; known metrics: {', '.join(names())}",
            hint=f"choose from {', '.join(names())}",
        )
    out = [get(m) for m in wanted]
    for m in out:
        if m.needs.judge and judge is None:
            raise ConfigError(
                f"the {m.name} metric needs a judge model", hint="pass --judge SPEC, e.g. openai/gpt-4o-mini"
            )
    return out
