"""Report figures (matplotlib, Agg backend), each saved as SVG (for the page) and PNG (for anything else).

Three questions the leaderboard alone cannot answer:
- does a model's score fall as its input gets longer (score vs input tokens, per task)?
- how do the settings compare (zero-shot, random or co-author demos, context budgets)?
- do demonstrations help, and do co-author demos help more than random ones? The few-shot effect is the
  *paired* difference to zero-shot on the same target papers, so paper difficulty cancels out.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from academiceval.report.results import Results, metric_key_map, setting_sort_key
from academiceval.scores.aggregate import bootstrap_mean, derive_seed
from academiceval.scores.models import Estimate
from academiceval.scores.windows import in_window
from academiceval.store.artifacts import RunData
from academiceval.store.models import MIN_N_FOR_INTERVAL
from academiceval.store.tasks import task_title


@dataclass
class Figure:
    name: str  # file stem under plots/
    title: str
    caption: str
    svg: str  # path relative to the report directory
    png: str


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "svg.hashsalt": "academiceval"})
    return plt


def colors_for(labels: Sequence[str]) -> dict[str, str]:
    """One stable colour per run label across every figure."""
    palette = [
        "#1f77b4",
        "#d62728",
        "#2ca02c",
        "#9467bd",
        "#ff7f0e",
        "#8c564b",
        "#e377c2",
        "#17becf",
        "#7f7f7f",
        "#bcbd22",
    ]
    # keyed by the label's own hash, not its rank among this report's labels: a model keeps its colour from one
    # report to the next; when two labels of one report want the same palette colour, the later takes a hue
    # derived from its hash (still the same in every report holding both)
    import colorsys
    import hashlib

    out: dict[str, str] = {}
    taken: set[str] = set()
    for lab in sorted(labels):
        h = int.from_bytes(hashlib.sha256(lab.encode("utf-8")).digest()[:8], "big")
        c = palette[h % len(palette)]
        k = 0
        while c in taken:
            k += 1
            r, g, b = colorsys.hsv_to_rgb(((h >> 8) / 2**56 + 0.618034 * k) % 1.0, 0.65, 0.75)
            c = f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
        out[lab] = c
        taken.add(c)
    return out


def _legend(fig, axes, ncol_max: int = 4) -> None:
    """One legend for the whole figure, above the panels, so it never hides data."""
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    if labels:
        fig.legend(
            [handles[lab] for lab in labels],
            labels,
            loc="lower center",
            bbox_to_anchor=(0.5, 1.0),
            ncol=min(ncol_max, len(labels)),
            fontsize=8,
            frameon=False,
        )


def _save(fig, out_dir: Path, name: str) -> tuple[str, str]:
    plots = out_dir / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    # each file is written beside its final name and renamed: a killed report never leaves half an image
    for ext, kw in (("svg", {"metadata": {"Date": None}}), ("png", {"dpi": 110})):
        tmp = plots / f".{name}.{ext}.part"
        fig.savefig(tmp, format=ext, bbox_inches="tight", **kw)
        os.replace(tmp, plots / f"{name}.{ext}")
    return f"plots/{name}.svg", f"plots/{name}.png"


def _grid(plt, n: int):
    cols = min(n, 2) if n > 1 else 1
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, 3.4 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def sample_points(
    runs: Sequence[RunData],
    metric: str,
    value_key: str,
    *,
    after: date | None,
    split: str | None,
    lengths: dict[tuple[str, str], int] | None = None,
) -> dict[tuple[str, str, str], list[tuple[str, int, float]]]:
    """(label, task, setting) -> [(arxiv_id, input_tokens, value)] for one metric key of the results.

    `lengths` ((round, sample_id) -> tokens) stands in where a record has no input token count (backends such
    as the baselines do not count tokens)."""
    lengths = lengths or {}
    out: dict[tuple[str, str, str], list[tuple[str, int, float]]] = defaultdict(list)
    keys = metric_key_map(runs)
    for run in runs:
        for (sid, m, h), sr in run.scores.items():
            key = keys[(m, h)]
            if key != metric or sr.error or value_key not in sr.values:
                continue
            rec = run.records.get(sid)
            if rec is None or not in_window(rec.published, after, rec.date_precision) or (split and rec.split != split):
                continue
            v = float(sr.values[value_key])
            n_in = rec.input_tokens or lengths.get((run.spec.round, sid), 0)
            if math.isfinite(v):
                out[(run.label, rec.task, rec.setting)].append((rec.arxiv_id, n_in, v))
    return out


def plot_length(
    results: Results, points, metric: str, value_key: str, out_dir: Path, *, x_label: str = "input tokens"
) -> Figure | None:
    """Score against input length: one panel per task, points per model plus binned means."""
    import numpy as np

    tasks = [t for t in results.tasks() if any(k[1] == t for k in points)]
    if not tasks:
        return None
    plt = _plt()
    colors = colors_for(results.labels())
    fig, axes = _grid(plt, len(tasks))
    for ax, task in zip(axes, tasks, strict=True):
        xs_all = [x for k, pts in points.items() if k[1] == task for _, x, _ in pts if x > 0]
        log = bool(xs_all) and max(xs_all) / max(1, min(xs_all)) > 20
        edges = (
            np.geomspace(min(xs_all), max(xs_all) + 1, 7)
            if log
            else np.linspace(min(xs_all, default=0), max(xs_all, default=1) + 1, 7)
        )
        for label in results.labels():
            pts = [p for k, ps in points.items() if k[0] == label and k[1] == task for p in ps]
            if not pts:
                continue
            x = np.array([p[1] for p in pts], dtype=float)
            y = np.array([p[2] for p in pts], dtype=float)
            ax.scatter(x, y, s=9, alpha=0.35, color=colors[label], linewidths=0, rasterized=len(x) > 300)
            idx = np.clip(np.digitize(x, edges) - 1, 0, len(edges) - 2)
            bx, by = [], []
            for b in range(len(edges) - 1):
                sel = idx == b
                if sel.any():
                    bx.append(float(x[sel].mean()))
                    by.append(float(y[sel].mean()))
            ax.plot(bx, by, "-o", ms=3, lw=1.4, color=colors[label], label=label)
        if log:
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

            ax.set_xscale("log")
            ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v >= 1000 else f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(task_title(task))
        ax.set_xlabel(x_label)
        ax.set_ylabel(f"{metric} ({value_key})")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    _legend(fig, axes)
    svg, png = _save(fig, out_dir, "score_vs_length")
    plt.close(fig)
    return Figure(
        "score_vs_length",
        "Score vs input length",
        f"Each dot is one sample ({metric}, {value_key}); lines join the mean of each input-length bin. All settings. "
        f"x: {x_label}.",
        svg,
        png,
    )


def error_bars(estimates: Sequence[Estimate]) -> list[list[float]]:
    """[below, above] error-bar lengths for matplotlib; an estimate without an interval (fewer than
    MIN_N_FOR_INTERVAL samples, the low-n rule) gets no bar rather than a degenerate one."""
    lo = [e.mean - e.ci_low if e.mean is not None and e.ci_low is not None else 0.0 for e in estimates]
    hi = [e.ci_high - e.mean if e.mean is not None and e.ci_high is not None else 0.0 for e in estimates]
    return [lo, hi]


def grouped_bars(ax, settings: Sequence[str], labels: Sequence[str], value_of, colors: dict[str, str], *,
                 markers: bool = False) -> list[str]:  # fmt: skip
    """Bars grouped by setting, each group centred on its setting's tick: one slot per model that has a value in
    this panel (a model of another task or round — the cloze baselines on a writing task — takes no slot, which
    had shifted every group off its label). Error bars only where there is an interval (the low-n rule), never a
    zero-length cap. Returns the labels drawn, in slot order."""
    present = [lab for lab in labels if any(_mean(value_of(lab, s)) is not None for s in settings)]
    width = 0.8 / max(1, len(present))
    for j, label in enumerate(present):
        pts = [(i + (j - (len(present) - 1) / 2) * width, e) for i, s in enumerate(settings)
               if _mean(e := value_of(label, s)) is not None]  # fmt: skip
        xs, ys = [x for x, _ in pts], [e.mean for _, e in pts]
        ax.bar(xs, ys, width=width, color=colors[label], label=label)
        ci = [(x, e) for x, e in pts if e.ci_low is not None and e.ci_high is not None]
        if ci:
            lo, hi = error_bars([e for _, e in ci])
            ax.errorbar([x for x, _ in ci], [e.mean for _, e in ci], yerr=[lo, hi], fmt="none", ecolor="black",
                        elinewidth=1, capsize=2)  # fmt: skip
        if markers:  # a marker on every bar, so a difference of exactly zero is visible (not mistaken for missing)
            ax.scatter(xs, ys, s=14, color=colors[label], edgecolors="#222", linewidths=0.6, zorder=3)
    ax.set_xticks(range(len(settings)))
    ax.set_xticklabels(settings)
    ax.set_xlim(-0.5, len(settings) - 0.5)  # one setting: a group as wide as with several, not the whole panel
    return present


def _mean(est: Estimate | None) -> float | None:
    return None if est is None else est.mean


def plot_settings(results: Results, metric: str, out_dir: Path) -> Figure | None:
    """Mean per setting, grouped by model, with the bootstrap interval as error bar."""
    tasks = [t for t in results.tasks() if any(metric in r.metrics for r in results.rows if r.task == t)]
    if not tasks:
        return None
    plt = _plt()
    labels = results.labels()
    colors = colors_for(labels)
    fig, axes = _grid(plt, len(tasks))
    for ax, task in zip(axes, tasks, strict=True):
        cells = {(r.label, r.setting): r.metrics[metric].main for r in results.rows
                 if r.task == task and metric in r.metrics}  # fmt: skip
        grouped_bars(ax, results.settings(task), labels, lambda lab, s, cells=cells: cells.get((lab, s)), colors)
        ax.set_title(task_title(task))
        ax.set_ylabel(metric)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    _legend(fig, axes)
    svg, png = _save(fig, out_dir, "settings")
    plt.close(fig)
    return Figure(
        "settings",
        "Per-setting comparison",
        f"Mean {metric} per setting; error bars: 95% bootstrap CI (none below {MIN_N_FOR_INTERVAL} samples).",
        svg,
        png,
    )


def fewshot_effects(results: Results, points, *, seed: int) -> dict[tuple[str, str, str], Estimate]:
    """(label, task, few-shot setting) -> paired difference to zero-shot on the same papers."""
    out: dict[tuple[str, str, str], Estimate] = {}
    for (label, task, setting), pts in points.items():
        family = setting.split(":")[0].lower()
        if family not in ("random", "coauthor", "co-author", "mixed"):
            continue
        zero = {a: v for a, _, v in points.get((label, task, "zero-shot"), [])}
        diffs = [v - zero[a] for a, _, v in sorted(pts) if a in zero]  # fixed order: reproducible bootstrap
        if diffs:
            # 63 bits: the seed these figures have always used (the same error bars as before one bootstrap)
            s = derive_seed(seed, "fewshot", label, task, setting) >> 1
            out[(label, task, setting)] = bootstrap_mean(diffs, seed=s)
    return out


def plot_fewshot(results: Results, effects: dict, metric: str, out_dir: Path) -> Figure | None:
    """Paired gain over zero-shot of each few-shot setting (random vs co-author demos), per model."""
    tasks = [t for t in results.tasks() if any(k[1] == t for k in effects)]
    if not tasks:
        return None
    plt = _plt()
    labels = results.labels()
    colors = colors_for(labels)
    fig, axes = _grid(plt, len(tasks))
    for ax, task in zip(axes, tasks, strict=True):
        settings = sorted({k[2] for k in effects if k[1] == task}, key=setting_sort_key)
        grouped_bars(ax, settings, labels, lambda lab, s, task=task: effects.get((lab, task, s)), colors, markers=True)
        ax.axhline(0, color="#333", lw=0.8)
        y0, y1 = ax.get_ylim()
        pad = max((y1 - y0) * 0.08, 0.005)
        ax.set_ylim(y0 - pad, y1 + pad)  # room for markers sitting exactly on zero
        ax.set_title(task_title(task))
        ax.set_ylabel(f"Δ {metric} vs zero-shot")
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    _legend(fig, axes)
    svg, png = _save(fig, out_dir, "fewshot")
    plt.close(fig)
    return Figure(
        "fewshot",
        "Few-shot effect",
        f"Mean paired difference in {metric} to zero-shot on the same target papers (above 0: the demos help); "
        f"error bars: 95% bootstrap CI (none below {MIN_N_FOR_INTERVAL} papers).",
        svg,
        png,
    )
