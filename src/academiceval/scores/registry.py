"""Metrics by name: `score_runs(metrics=[...])` looks each name up here and lets its scorer score a run.

A metric is registered once with what it needs and how to build its scorer; nothing else in `scores` knows
the list, so a new family (citation-cloze accuracy, L-Eval EM/F1/ROUGE, citation faithfulness) adds metrics by
registering them, without touching the scoring loop:

    from academiceval.scores.registry import Metric, register
    from academiceval.scores.scorer import Needs
    register(Metric("exact-match", build=lambda opts: ExactMatch(), needs=Needs(reference=True),
                    summary="1.0 when the normalized output equals the reference"))

and, if the module is not imported anyway, by adding it to `PLUGIN_MODULES` below (imported on first lookup), or,
for a task family's metric, to its `Family.extensions["metrics"]`.

`name` is what users type (`--metrics rouge-l,bertscore`); the scorer's `metric_name` is what its ScoreRecords
carry, and it may spell the configuration that matters (e.g. `bertscore-all-MiniLM-L6-v2-L6`,
`judge-gpt-4o-mini-vs-reference`), so results of different models/layers are never averaged together.
A scorer (`scores.scorer`: `SampleScorer`, `BatchScorer` or `AsyncScorer`) says how one sample (or a batch) is
scored; the loop around it — what is left to do, unusable records with their reason (no reference, generation
error), error records, writing as it goes, progress — is `scores.scorer.score_job`, the same for every metric.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from academiceval.errors import ConfigError
from academiceval.scores.config import ScoreConfig
from academiceval.scores.scorer import AnyScorer, Needs
from academiceval.store.tasks import find_spec, load_extensions

# Modules that register the built-in metrics when imported. A family's own metrics (L-Eval's `leval`) are
# registered by the modules it lists under `Family.extensions["metrics"]`, imported after these.
PLUGIN_MODULES: tuple[str, ...] = (
    "academiceval.scores.builtin",
    "academiceval.scores.citations",
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


class Options(BaseModel):
    """Base of a metric's options model: typed, every field with a default, a misspelled option an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


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


Scorer = AnyScorer  # a built metric (scores.scorer): names its records, scores samples; the loop is score_job


@dataclass(frozen=True)
class Metric:
    """A registered metric: its user-facing name, what it needs, and how to build its scorer."""

    name: str
    build: Callable[[MetricOptions], Scorer]
    needs: Needs = field(default_factory=Needs)
    summary: str = ""
    options: type[BaseModel] | None = None  # its options (`--metric-arg NAME.OPTION=VALUE`), extra="forbid"


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
        load_extensions("metrics")


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
