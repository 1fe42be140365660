"""Score by paper date for multiple-choice rounds (the citation cloze): is a live round's accuracy the same on
the newest papers as on older ones?

The writing tasks show how a score depends on when the target paper was first submitted through the
contamination gap (before vs after each model's cutoff, `report.contamination`); a cloze round is built after
a live cutoff (`cloze build --after`) and its runs are mostly baselines without a published cutoff, so the gap
alone says nothing there. This section gives, for every run × task × setting of a multiple-choice task (task
spec `prompt_kind == "choice"`), the ranking metric's mean per period of the target paper's v1 date with the
package's bootstrap CI (`scores.aggregate.bootstrap_mean`, the low-n rule included): periods are months when
the round's papers span at most a year, quarters up to four years, else years — so a live round (a few months)
and a round without a cutoff (several years) both read in a handful of rows. The report's window and split apply.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date

from academiceval.report.leaderboard import fmt_with_n
from academiceval.report.models import DateBucket, DateSeries
from academiceval.report.results import Results
from academiceval.scores.aggregate import bootstrap_mean, cell_records, derive_seed
from academiceval.store.artifacts import RunData
from academiceval.store.tasks import find_spec


def granularity(dates: Sequence[date]) -> str:
    """Months for a span of at most a year, quarters up to four years, else years."""
    if not dates:
        return "year"
    days = (max(dates) - min(dates)).days
    return "month" if days <= 366 else "quarter" if days <= 4 * 366 else "year"


def period_of(d: date, unit: str) -> tuple[str, date]:
    """(label, first day) of the period holding `d`."""
    if unit == "month":
        return f"{d.year}-{d.month:02d}", date(d.year, d.month, 1)
    if unit == "quarter":
        q = (d.month - 1) // 3
        return f"{d.year}-Q{q + 1}", date(d.year, 3 * q + 1, 1)
    return str(d.year), date(d.year, 1, 1)


def is_choice(task: str) -> bool:
    spec = find_spec(task)
    return spec is not None and spec.prompt_kind == "choice"


def score_by_date(results: Results, runs: Sequence[RunData], prefer_metric: str | None = None) -> list[DateSeries]:
    """One series per report row of a multiple-choice task, on the row's ranking metric."""
    by_dir = {str(r.path): r for r in runs}
    out: list[DateSeries] = []
    for row in results.rows:
        run = by_dir.get(row.run_dir)
        if run is None or not is_choice(row.task):
            continue
        key = results.primary_metric(row.task, prefer_metric)
        m = row.metrics.get(key) if key else None
        if m is None:
            continue
        recs = cell_records(
            run.scores.values(),
            task=row.task,
            setting=row.setting,
            metric=m.metric,
            config_hash=m.config_hash,
            value=m.primary,
            split=results.split,
            after=results.window.after,
        )
        if not recs:
            continue
        unit = granularity([r.published for r in recs])
        groups: dict[tuple[str, date], list[float]] = defaultdict(list)
        for r in recs:
            groups[period_of(r.published, unit)].append(r.values[m.primary])
        buckets = [
            DateBucket(
                period=label,
                start=start,
                score=bootstrap_mean(
                    vals, seed=derive_seed("by-date", row.run_dir, row.task, row.setting, m.config_hash, label)
                ),
            )
            for (label, start), vals in sorted(groups.items(), key=lambda kv: kv[0][1])
        ]
        out.append(
            DateSeries(
                model=row.label,
                run_dir=row.run_dir,
                task=row.task,
                setting=row.setting,
                metric=m.metric,
                value=m.primary,
                granularity=unit,
                buckets=buckets,
            )
        )
    return out


def markdown(results: Results) -> str:
    if not results.by_date:
        return ""
    lines = [
        "",
        "## Score by paper date (multiple-choice tasks)",
        "",
        "Mean of the ranking metric per period of the target paper's first submission (v1), 95% percentile "
        "bootstrap; fewer than 10 items: no interval.",
        "",
        "| model | task | setting | metric | period | score |",
        "|---|---|---|---|---|---|",
    ]
    for s in results.by_date:
        for b in s.buckets:
            cells = (s.model, s.task, s.setting, f"{s.metric}:{s.value}", b.period, fmt_with_n(b.score))
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
