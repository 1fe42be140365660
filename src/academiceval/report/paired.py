"""Paired verdicts between adjacent models of each leaderboard table (issue 15).

Each table ranks runs of one round × task × setting on one metric. For every two neighbours (rank i and i+1)
this compares them on the samples both scored (`scores.paired.compare_records`: one paired permutation test,
whose inversion is the interval shown — significant exactly when the interval excludes 0; fewer than 10 shared
samples: no interval and no verdict) and marks whether the higher one is significantly better. The
results are stored in `results.json` (`paired`) and drawn under each table (Markdown and HTML).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from academiceval.scores.paired import TEST, PairedDiff, compare_records
from academiceval.store.artifacts import RunData
from academiceval.store.models import MIN_N_FOR_INTERVAL

if TYPE_CHECKING:
    from academiceval.report.results import Results


def adjacent_pairs(results: Results, runs: Sequence[RunData], prefer_metric: str | None = None) -> list[PairedDiff]:
    """A vs its next-ranked neighbour B (A ranked higher) for every table of the report."""
    by_dir = {str(r.path): r for r in runs}
    out: list[PairedDiff] = []
    for task in results.tasks():
        key = results.primary_metric(task, prefer_metric)
        if key is None:
            continue
        for setting in results.settings(task):
            ranked = [r for r in results.ranked(task, setting, key) if key in r.metrics]
            for rnd in sorted({r.round for r in ranked}):
                rows = [r for r in ranked if r.round == rnd and r.metrics[key].main.mean is not None]
                for hi, lo in itertools.pairwise(rows):
                    ra, rb = by_dir.get(hi.run_dir), by_dir.get(lo.run_dir)
                    if ra is None or rb is None:
                        continue
                    m = hi.metrics[key]
                    recs = [
                        [
                            s
                            for s in run.scores.values()
                            if s.task == task
                            and s.setting == setting
                            and s.metric == m.metric
                            and s.config_hash == m.config_hash
                        ]
                        for run in (ra, rb)
                    ]
                    diffs = compare_records(
                        recs[0],
                        recs[1],
                        a_label=hi.label,
                        b_label=lo.label,
                        after=results.window.after,
                        split=results.split,
                        level=results.bootstrap.level,
                    )
                    out.extend(diffs)
    return out


def markdown(results: Results) -> str:
    """The paired verdicts as a Markdown section (appended to leaderboard.md); empty when there are none."""
    if not results.paired:
        return ""
    lines = [
        "",
        "## Paired verdicts between adjacent models",
        "",
        f"Each row compares a model with the next one down its table on the samples both scored. Test: {TEST}. "
        f"**Significant** at α = {1 - results.paired[0].level:.2f}.",
        "",
        "| task | setting | metric | higher (A) | next (B) | n | A − B [95% CI] | p | verdict |",
        "|---|---|---|---|---|---:|---|---:|---|",
    ]
    for d in results.paired:
        p = f"{d.p_value:.4f}" if d.p_value is not None else "—"
        lines.append(
            f"| {d.task} | {d.setting} | {d.metric}:{d.value} | {d.a} | {d.b} | {d.n} | {fmt_diff(d)} | {p} | "
            f"{verdict_text(d, markdown=True)} |"
        )
    return "\n".join(lines) + "\n"


def fmt_diff(d: PairedDiff) -> str:
    """`+0.035 [+0.009, +0.061]`, or the mean alone below the low-n rule (`+0.093 (n=5, low n)`)."""
    e = d.diff
    if e.mean is None:
        return "—"
    if e.ci_low is None or e.ci_high is None:
        return f"{e.mean:+.3f} (n={e.n}, low n)"
    return f"{e.mean:+.3f} [{e.ci_low:+.3f}, {e.ci_high:+.3f}]"


def verdict_text(d: PairedDiff, *, markdown: bool = False) -> str:
    """The verdict in words: significant / not significant / too few shared samples to say."""
    if d.p_value is None:
        return f"low n (< {MIN_N_FOR_INTERVAL} shared): no verdict"
    if d.significant:
        return "**significant**" if markdown else "significant"
    return "not significant"
