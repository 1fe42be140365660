"""The leaderboard as data (ranked tables) and as Markdown.

Models are ranked per round, task and setting, never across settings: a co-author few-shot score and a
zero-shot score answer different questions. Each table names the metric and the value that ranks it
(e.g. ``rouge-l`` F) and its configuration hash, so numbers from different metric settings are never compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from academiceval.report.results import ResultRow, Results
from academiceval.scores.models import EpochSpread, Estimate
from academiceval.store.models import MIN_N_FOR_INTERVAL
from academiceval.store.tasks import task_title


@dataclass
class Entry:
    rank: int | None  # None: nothing scored
    row: ResultRow
    main: Estimate
    others: dict[str, Estimate]


@dataclass
class Table:
    round: str
    task: str
    setting: str
    metric: str | None  # results key of the ranking metric
    value_key: str
    config_hash: str
    entries: list[Entry] = field(default_factory=list)

    @property
    def other_keys(self) -> list[str]:
        return sorted({k for e in self.entries for k in e.others})

    def other_label(self, key: str) -> str:
        """`metric (value)` for a secondary column, e.g. `bertscore-all-MiniLM-L6-v2-L6 (f)`."""
        for e in self.entries:
            m = e.row.metrics.get(key)
            if m is not None:
                return f"{key} ({m.primary})"
        return key

    @property
    def total_samples(self) -> int:
        return sum(e.row.counts.samples for e in self.entries)

    @property
    def metric_label(self) -> str:
        return f"{self.metric} ({self.value_key})" if self.metric else "no metric"


# The package's one low-n rule (store.models): below this many samples a cell shows its mean and "(n=K)", never
# an interval — an interval over one or two samples (`[0.169, 0.169]` for n=1) looks precise and is not.
MIN_N_FOR_CI = MIN_N_FOR_INTERVAL
LOW_N_RULE = f"fewer than {MIN_N_FOR_INTERVAL} samples: the mean with (n=K, low n), no interval and no verdict"


def low_n(est: Estimate | None) -> bool:
    return est is not None and est.mean is not None and est.n < MIN_N_FOR_CI


def fmt(est: Estimate | None, digits: int = 3) -> str:
    """`0.306 [0.209, 0.411]`; below the low-n rule `0.306 (n=5, low n)` (the page's words); `—` when nothing was
    scored."""
    if est is None or est.mean is None:
        return "—"
    if low_n(est):
        return f"{est.mean:.{digits}f} (n={est.n}, low n)"
    if est.ci_low is None or est.ci_high is None:
        return f"{est.mean:.{digits}f}"
    return f"{est.mean:.{digits}f} [{est.ci_low:.{digits}f}, {est.ci_high:.{digits}f}]"


def fmt_with_n(e: Estimate, signed: bool = False) -> str:
    """`0.306 [0.209, 0.411] n=42` (`+0.035 [...]` when signed): the sections that pool items across models and
    periods (contamination gap, score by date) say each cell's n; below the low-n rule `0.306 (n=5, low n)`."""
    if e.mean is None:
        return "—"
    f = "{:+.3f}" if signed else "{:.3f}"
    if e.ci_low is None or e.ci_high is None:
        return f"{f.format(e.mean)} (n={e.n}, low n)"
    return f"{f.format(e.mean)} [{f.format(e.ci_low)}, {f.format(e.ci_high)}] n={e.n}"


def rounds_of(results: Results) -> list[str]:
    return sorted({r.round for r in results.rows})


def tables(results: Results, prefer_metric: str | None = None) -> list[Table]:
    """One ranked table per round × task × setting. Ties share a rank (equal means)."""
    out = []
    for rnd in rounds_of(results):
        sub = results.model_copy(update={"rows": [r for r in results.rows if r.round == rnd]})
        for task in sub.tasks():
            metric = sub.primary_metric(task, prefer_metric)
            others = [k for k in sub.metric_keys(task) if k != metric]
            for setting in sub.settings(task):
                rows = (
                    sub.ranked(task, setting, metric)
                    if metric
                    else [r for r in sub.rows if r.task == task and r.setting == setting]
                )
                mr = next((r.metrics[metric] for r in rows if metric in r.metrics), None) if metric else None
                t = Table(
                    round=rnd,
                    task=task,
                    setting=setting,
                    metric=metric,
                    value_key=mr.primary if mr else "",
                    config_hash=mr.config_hash if mr else "",
                )
                rank, prev = 0, None
                for i, r in enumerate(rows, 1):
                    main = r.metrics[metric].main if metric and metric in r.metrics else Estimate(n=0)
                    if main.mean is not None and main.mean != prev:
                        rank, prev = i, main.mean
                    t.entries.append(
                        Entry(
                            rank=rank if main.mean is not None else None,
                            row=r,
                            main=main,
                            others={k: r.metrics[k].main for k in others if k in r.metrics},
                        )
                    )
                out.append(t)
    return out


def _md_cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def window_text(results: Results) -> str:
    w = results.window
    if w.after is None:
        return "all target papers"
    why = f" — {w.reason}" if w.reason and "first submitted" not in w.reason else ""
    return f"target papers first submitted after {w.after.isoformat()}{why}"


def empty_window_text(results: Results) -> str | None:
    """A single explanation when runs exist but no sample falls inside the window (None otherwise)."""
    if not results.rows or any(r.counts.samples for r in results.rows) or results.window.after is None:
        return None
    outside = sum(r.counts.outside_window for r in results.rows)
    return (
        f"No samples inside the window: all {outside} run records are of papers first submitted on or before "
        f"{results.window.after.isoformat()}. Choose an earlier date or a round with newer papers."
    )


def to_markdown(results: Results, prefer_metric: str | None = None) -> str:
    bs = results.bootstrap
    lines = [
        "# academiceval leaderboard",
        "",
        f"- Generated {results.generated_at} by academiceval {results.package_version}",
        f"- Window: {window_text(results)}" + (f"; split: {results.split}" if results.split else ""),
        f"- Intervals: {int(bs.level * 100)}% percentile bootstrap over samples, {bs.resamples} resamples, "
        f"base seed {bs.seed}; {LOW_N_RULE}",
    ]
    rounds = rounds_of(results)
    for rnd in rounds:
        sha = next(r.round_manifest_sha256 for r in results.rows if r.round == rnd)
        lines.append(f"- Round `{rnd}`: manifest sha256 `{sha}`")
    if not results.rows:
        lines += ["", "_No run records found._", ""]
        return "\n".join(lines)
    empty = empty_window_text(results)
    if empty:
        lines += ["", f"_{empty}_", ""]
        return "\n".join(lines)
    for t in tables(results, prefer_metric):
        head = f"## {task_title(t.task)} · {t.setting}"
        if len(rounds) > 1:
            head += f" · round {t.round}"
        lines += ["", head, ""]
        cfg = f", config `{t.config_hash[:12]}`" if t.config_hash else ""
        lines.append(f"Ranked by **{t.metric_label}**{cfg}; mean [95% CI].")
        lines.append("")
        other_keys = t.other_keys
        cols = [
            "#",
            "model",
            "backend",
            t.metric_label,
            *[t.other_label(k) for k in other_keys],
            "n",
            "scored",
            "errors",
            "truncated %",
            "skipped",
            "not run",
        ]
        lines.append("| " + " | ".join(_md_cell(c) for c in cols) + " |")
        lines.append("|" + "|".join("---:" if i != 1 and i != 2 else "---" for i in range(len(cols))) + "|")
        for e in t.entries:
            c = e.row.counts
            cells = [
                e.rank if e.rank is not None else "—",
                e.row.label,
                e.row.backend,
                fmt(e.main),
                *[fmt(e.others.get(k)) for k in other_keys],
                c.samples,
                c.scored,
                c.errors,
                f"{c.truncated_pct:.1f}",
                c.skipped,
                "—" if c.not_run is None else c.not_run,
            ]
            lines.append("| " + " | ".join(_md_cell(x) for x in cells) + " |")
        if t.total_samples == 0:
            lines += ["", "_No samples inside the window for this task and setting._"]
        lines += epoch_lines(t)
    notes = [*results.notes]
    low = low_n_summary(results)
    if low:
        notes.append(low)
    if notes:
        lines += ["", "## Notes", ""] + [f"- {_md_cell(n)}" for n in notes]
    if results.problems:
        lines += ["", "## Problems", ""] + [f"- {_md_cell(p)}" for p in results.problems]
    lines.append("")
    return "\n".join(lines)


def low_n_summary(results: Results) -> str | None:
    """One line naming the task × setting cells whose ranking values rest on fewer than MIN_N samples (None: none)."""
    cells: dict[tuple[str, str, str], int] = {}
    for r in results.rows:
        for m in r.metrics.values():
            if low_n(m.main):
                key = (r.round, r.task, r.setting)
                cells[key] = max(cells.get(key, 0), m.main.n)
    if not cells:
        return None
    rounds = len({k[0] for k in cells}) > 1
    names = [f"{t} · {s}" + (f" ({rnd})" if rounds else "") + f" (n ≤ {n})" for (rnd, t, s), n in sorted(cells.items())]
    return (
        f"low n — {len(names)} task × setting table{'s' if len(names) > 1 else ''} with fewer than {MIN_N_FOR_CI} "
        f"samples (means only, no intervals or verdicts): " + "; ".join(names)
    )


def fmt_spread(spread: EpochSpread | None, digits: int = 3) -> str:
    """`0.533 ± 0.115` — the mean and sample sd of the per-epoch means (ElaipBench's "mean ± sd across runs")."""
    if spread is None or spread.mean is None:
        return "—"
    return f"{spread.mean:.{digits}f} ± {spread.sd or 0.0:.{digits}f}"


def epoch_lines(t: Table) -> list[str]:
    """Under a table whose runs have several epochs: per run, every value's mean ± sd across epochs and the
    ranking value of each epoch. Nothing for runs of one epoch (their tables read as before)."""
    rows = [(e, e.row.metrics[t.metric]) for e in t.entries if t.metric and t.metric in e.row.metrics]
    rows = [(e, m) for e, m in rows if m.epochs > 1]
    if not rows:
        return []
    keys = sorted({k for _, m in rows for k in m.by_epoch}, key=lambda k: (k != rows[0][1].primary, k))
    out = [
        "",
        f"Across epochs ({t.metric}): mean ± sd of the per-epoch means (each epoch a full run over the samples it "
        "answered); the ranked mean above averages each sample over its epochs first.",
        "",
        "| " + " | ".join(_md_cell(c) for c in ["model", "epochs", *keys, f"per epoch ({rows[0][1].primary})"]) + " |",
        "|---|" + "---:|" * (len(keys) + 2),
    ]
    for e, m in rows:
        per = m.by_epoch.get(m.primary)
        each = ", ".join("—" if v is None else f"{v:.3f}" for v in per.per_epoch) if per else "—"
        cells = [e.row.label, m.epochs, *[fmt_spread(m.by_epoch.get(k)) for k in keys], each]
        out.append("| " + " | ".join(_md_cell(x) for x in cells) + " |")
    return out


@dataclass
class TaskMatrix:
    """One task at a glance: models × settings on the ranking metric (rows sorted on the first setting)."""

    round: str
    task: str
    metric: str | None
    settings: list[str]
    rows: list[tuple[str, list[Estimate | None]]]


def task_matrices(results: Results, prefer_metric: str | None = None) -> list[TaskMatrix]:
    out = []
    for rnd in rounds_of(results):
        rows_r = [r for r in results.rows if r.round == rnd]
        sub = results.model_copy(update={"rows": rows_r})
        for task in sub.tasks():
            metric = sub.primary_metric(task, prefer_metric)
            settings = sub.settings(task)
            cells: dict[str, list[Estimate | None]] = {}
            for label in sorted({r.label for r in rows_r if r.task == task}):
                line: list[Estimate | None] = []
                for s in settings:
                    row = next((r for r in rows_r if r.task == task and r.setting == s and r.label == label), None)
                    line.append(row.metrics[metric].main if row and metric and metric in row.metrics else None)
                cells[label] = line

            def key(item: tuple[str, list[Estimate | None]]) -> tuple[int, float, str]:
                first = item[1][0] if item[1] else None
                return (0, -first.mean, item[0]) if first and first.mean is not None else (1, 0.0, item[0])

            out.append(TaskMatrix(rnd, task, metric, settings, sorted(cells.items(), key=key)))
    return out
