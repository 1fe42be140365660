"""The contamination gap (issue 15): a model's score on papers before vs after its knowledge cutoff.

For every run whose model has a known cutoff in the model-info table (`scores.windows.load_model_info`: the
packaged `model_info.yaml`, plus `$ACADEMICEVAL_MODEL_INFO`; the release date when no cutoff is published), per
task × setting on the report's ranking metric:

- `before` = mean over target papers first submitted on or before the cutoff, `after` = strictly after it, each
  with the package's bootstrap CI (`scores.aggregate.bootstrap_mean`);
- `gap` = before − after with a 95% percentile-bootstrap CI that resamples the two groups independently (they are
  different papers, so there is nothing to pair), seeded from what is compared. A gap whose CI lies above 0
  means the model does better on papers it may have seen — contamination, or older papers being easier; the
  title-only probe separates the two:
- `probe` = the same numbers for the model's title-only probe run (`academiceval run --probe title-only`, same
  round) when one was saved: a model that writes a paper's abstract from its title alone better before its
  cutoff than after it has memorised those papers.

The split of the report applies; its `--after` window does not (the gap needs both sides of the cutoff).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date

import numpy as np

from academiceval.report.leaderboard import fmt_with_n
from academiceval.report.models import METHOD, ContaminationGap, GapSide
from academiceval.report.results import Results
from academiceval.scores.aggregate import LEVEL, N_BOOT, bootstrap_mean, cell_records, derive_seed
from academiceval.scores.models import Estimate
from academiceval.scores.windows import find_model, load_model_info
from academiceval.store.artifacts import RunData
from academiceval.store.models import MIN_N_FOR_INTERVAL

PROBE = "title-only"


def bootstrap_gap(
    a: Sequence[float], b: Sequence[float], *, seed: int, resamples: int = N_BOOT, level: float = LEVEL
) -> Estimate:
    """mean(a) − mean(b) of two independent samples with a percentile-bootstrap interval (each resampled alone);
    no interval when either side has fewer than MIN_N_FOR_INTERVAL values."""
    x = np.asarray([v for v in a if v is not None and math.isfinite(v)], dtype=float)
    y = np.asarray([v for v in b if v is not None and math.isfinite(v)], dtype=float)
    if x.size == 0 or y.size == 0:
        return Estimate(n=0)
    d = float(x.mean() - y.mean())
    if min(x.size, y.size) < MIN_N_FOR_INTERVAL:  # the one low-n rule: a side this small gets no interval
        return Estimate(n=int(x.size + y.size), mean=d)
    rng = np.random.default_rng(seed)
    mx = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    my = y[rng.integers(0, y.size, size=(resamples, y.size))].mean(axis=1)
    tail = 50.0 * (1.0 - level)
    lo, hi = np.percentile(mx - my, [tail, 100.0 - tail])
    return Estimate(n=int(x.size + y.size), mean=d, ci_low=float(lo), ci_high=float(hi))


def _side(
    run: RunData, task: str, setting: str, metric: str, chash: str, value: str, cutoff: date, split: str | None
) -> GapSide | None:
    recs = cell_records(
        run.scores.values(), task=task, setting=setting, metric=metric, config_hash=chash, value=value, split=split
    )
    if not recs:
        return None
    before = [r.values[value] for r in recs if r.published <= cutoff]
    after = [r.values[value] for r in recs if r.published > cutoff]
    seed = derive_seed("contamination", run.spec.model, run.spec.probe, task, setting, metric, chash, cutoff)
    return GapSide(
        before=bootstrap_mean(before, seed=seed),
        after=bootstrap_mean(after, seed=seed + 1),
        gap=bootstrap_gap(before, after, seed=seed + 2),
    )


def contamination_gaps(
    results: Results, runs: Sequence[RunData], *, model_info: str | None = None, prefer_metric: str | None = None
) -> list[ContaminationGap]:
    """One gap per (non-probe run with a known cutoff) × task × setting of the report."""
    table = load_model_info(model_info)
    probes = [r for r in runs if r.spec.probe == PROBE]
    out: list[ContaminationGap] = []
    for run in runs:
        if run.spec.probe:
            continue
        info = find_model(run.spec.model, table)
        if info is None or (info.knowledge_cutoff or info.release) is None:
            continue
        cutoff = info.knowledge_cutoff or info.release
        assert cutoff is not None
        kind = "knowledge cutoff" if info.knowledge_cutoff else "release (no cutoff published)"
        probe = next((p for p in probes if p.spec.model == run.spec.model and p.spec.round == run.spec.round), None)
        for row in [r for r in results.rows if r.run_dir == str(run.path)]:
            key = results.primary_metric(row.task, prefer_metric)
            m = row.metrics.get(key) if key else None
            if m is None:
                continue
            side = _side(run, row.task, row.setting, m.metric, m.config_hash, m.primary, cutoff, results.split)
            if side is None:
                continue
            pside = (
                _side(probe, row.task, row.setting, m.metric, m.config_hash, m.primary, cutoff, results.split)
                if probe is not None
                else None
            )
            out.append(
                ContaminationGap(
                    model=row.label,
                    run_dir=row.run_dir,
                    cutoff=cutoff,
                    cutoff_kind=kind,
                    task=row.task,
                    setting=row.setting,
                    metric=m.metric,
                    value=m.primary,
                    scores=side,
                    probe=pside,
                    probe_run_dir=str(probe.path) if pside is not None and probe is not None else None,
                )
            )
    return out


def markdown(results: Results) -> str:
    if not results.contamination:
        return ""
    lines = [
        "",
        "## Contamination gap (before vs after each model's cutoff)",
        "",
        f"{METHOD}. Probe: the model's `--probe title-only` run of the same round, when saved.",
        "",
        "| model | cutoff | task | setting | metric | before | after | gap | probe gap |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for g in results.contamination:
        s = g.scores
        probe = fmt_with_n(g.probe.gap, True) if g.probe else "no probe run"
        lines.append(
            f"| {g.model} | {g.cutoff} ({g.cutoff_kind}) | {g.task} | {g.setting} | {g.metric}:{g.value} | "
            f"{fmt_with_n(s.before)} | {fmt_with_n(s.after)} | {fmt_with_n(s.gap, True)} | {probe} |"
        )
    return "\n".join(lines) + "\n"
