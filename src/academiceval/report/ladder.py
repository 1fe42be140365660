"""Effective writing length from context ladders (issue 15).

A ladder round (`build --ladder 8K,16K,...`, rounds.ladder) holds the same targets at several context budgets,
as settings `ctx:N`. For each run × task with at least two rungs, on the report's ranking metric:

- every rung's score is computed over the targets scored at EVERY rung (pairing by target paper), with the
  package's bootstrap CI;
- the best rung is the one with the highest mean; each other rung is compared with it by a paired test over
  the same targets (`scores.paired`: a two-sided paired permutation test of the mean difference, CI from the
  paired percentile bootstrap), at the report's level (α = 0.05);
- the **effective writing length** is the largest rung whose score is not significantly below the best rung's.

Written to `results.json` as `ladders` (every rung) and `effective_length` ({model: {task: tokens}}), drawn as
score vs budget per model with CIs, and stated in a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from academiceval.report import plots
from academiceval.report.models import Ladder, Rung
from academiceval.report.results import Results
from academiceval.scores.aggregate import bootstrap_mean, derive_seed, latest
from academiceval.scores.paired import TEST, permutation_p
from academiceval.store.artifacts import RunData
from academiceval.store.tasks import task_title


def rung_tokens(setting: str) -> int | None:
    if setting.startswith("ctx:"):
        try:
            return int(setting[4:])
        except ValueError:
            return None
    return None


def _values(
    run: RunData, task: str, setting: str, metric: str, chash: str, value: str, split: str | None
) -> dict[str, float]:
    """arxiv id (from the sample id) → value, for one task's rung."""
    out: dict[str, float] = {}
    for r in latest(run.scores.values()):
        if (
            r.task != task
            or r.setting != setting
            or r.metric != metric
            or r.config_hash != chash
            or r.error is not None
        ):
            continue
        if split is not None and r.split != split:
            continue
        v = r.values.get(value)
        if v is not None and np.isfinite(v):
            out[r.sample_id.rsplit("/", 1)[-1]] = float(v)
    return out


def ladders(results: Results, runs: Sequence[RunData], prefer_metric: str | None = None) -> list[Ladder]:
    by_dir = {str(r.path): r for r in runs}
    alpha = 1.0 - results.bootstrap.level
    out: list[Ladder] = []
    for run_dir in sorted({r.run_dir for r in results.rows}):
        run = by_dir.get(run_dir)
        if run is None:
            continue
        rows = [r for r in results.rows if r.run_dir == run_dir and rung_tokens(r.setting) is not None]
        for task in sorted({r.task for r in rows}):
            key = results.primary_metric(task, prefer_metric)
            trows = sorted(
                (r for r in rows if r.task == task and key in r.metrics), key=lambda r: rung_tokens(r.setting)
            )
            if len(trows) < 2 or key is None:
                continue
            m = trows[0].metrics[key]
            vals = {
                r.setting: _values(run, task, r.setting, m.metric, m.config_hash, m.primary, results.split)
                for r in trows
            }
            shared = sorted(set.intersection(*(set(v) for v in vals.values())))
            if len(shared) < 2:
                continue
            arrays = {s: np.array([v[t] for t in shared]) for s, v in vals.items()}
            seed0 = derive_seed("ladder", run.spec.model, task, m.metric, m.config_hash, results.split)
            best = max(arrays, key=lambda s: (float(arrays[s].mean()), -rung_tokens(s)))  # ties: the smaller rung
            rungs: list[Rung] = []
            for s, x in arrays.items():
                seed = derive_seed(seed0, s)
                rung = Rung(tokens=rung_tokens(s), setting=s, score=bootstrap_mean(x.tolist(), seed=seed))
                if s != best:
                    d = x - arrays[best]
                    rung.diff_to_best = bootstrap_mean(d.tolist(), seed=seed + 1)
                    rung.p_value = permutation_p(d, seed=seed + 2)
                    rung.below_best = bool(d.mean() < 0 and rung.p_value < alpha)
                rungs.append(rung)
            eff = max(r.tokens for r in rungs if not r.below_best)
            out.append(
                Ladder(
                    model=trows[0].label,
                    run_dir=run_dir,
                    task=task,
                    metric=m.metric,
                    value=m.primary,
                    targets=len(shared),
                    rungs=rungs,
                    best=rung_tokens(best),
                    effective_length=eff,
                    level=results.bootstrap.level,
                )
            )
    return out


def effective_lengths(items: Sequence[Ladder]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for lad in items:
        out.setdefault(lad.model, {})[lad.task] = lad.effective_length
    return out


def kilo(n: int) -> str:
    return f"{n / 1000:g}K" if n >= 1000 else str(n)


def markdown(results: Results) -> str:
    if not results.ladders:
        return ""
    lines = [
        "",
        "## Context ladder: effective writing length",
        "",
        "Score at each context budget over the targets scored at every rung; the effective writing length is the "
        f"largest rung not significantly below the model's best rung ({TEST}; α = {1 - results.ladders[0].level:.2f}).",
        "",
        "| model | task | metric | targets | " + "score by budget | best | effective length |",
        "|---|---|---|---:|---|---|---|",
    ]
    for lad in results.ladders:
        cells = ", ".join(
            f"{kilo(r.tokens)}: {r.score.mean:.3f}{' ↓' if r.below_best else ''}"
            for r in lad.rungs
            if r.score.mean is not None
        )
        lines.append(
            f"| {lad.model} | {lad.task} | {lad.metric}:{lad.value} | {lad.targets} | {cells} | {kilo(lad.best)} | "
            f"**{kilo(lad.effective_length)}** |"
        )
    return "\n".join(lines) + "\n"


def plot(results: Results, out_dir: Path) -> plots.Figure | None:
    """Score vs context budget per model (one panel per task), 95% bootstrap CIs as error bars."""
    if not results.ladders:
        return None
    plt = plots._plt()
    tasks = sorted({lad.task for lad in results.ladders})
    labels = sorted({lad.model for lad in results.ladders})
    colors = plots.colors_for(labels)
    fig, axes = plots._grid(plt, len(tasks))
    for ax, task in zip(axes, tasks, strict=True):
        for lad in (x for x in results.ladders if x.task == task):
            rs = [r for r in lad.rungs if r.score.mean is not None]
            xs = [r.tokens for r in rs]
            ys = [r.score.mean for r in rs]
            lo = [r.score.mean - (r.score.ci_low if r.score.ci_low is not None else r.score.mean) for r in rs]
            hi = [(r.score.ci_high if r.score.ci_high is not None else r.score.mean) - r.score.mean for r in rs]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=colors[lad.model], label=lad.model)
            ax.axvline(lad.effective_length, color=colors[lad.model], linestyle=":", alpha=0.6)
        ax.set_xscale("log", base=2)
        ticks = sorted({r.tokens for lad in results.ladders if lad.task == task for r in lad.rungs})
        ax.set_xticks(ticks)
        ax.set_xticklabels([kilo(t) for t in ticks])
        ax.set_title(task_title(task))
        ax.set_xlabel("context budget (tokens)")
        ax.set_ylabel(results.ladders[0].metric)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    plots._legend(fig, axes)
    svg, png = plots._save(fig, out_dir, "ladder")
    plt.close(fig)
    return plots.Figure(
        "ladder",
        "Score vs context budget (context ladder)",
        "Mean score per rung over the same targets; error bars: 95% bootstrap CI; dotted line: the model's effective "
        "writing length (largest rung not significantly below its best rung, paired permutation test, α = 0.05).",
        svg,
        png,
    )
