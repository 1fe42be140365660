"""Metric–human agreement: Kendall τ and Spearman ρ (scipy) per task and setting, as L-Eval reports them.

L-Eval correlates each automatic metric with the average human score *across models* (system level), with and
without the length instruction (LIE). `agreement` does that, and also correlates across individual answers
(sample level) when the human file scores single answers.

Inputs are plain rows so any source works:
- human scores: `read_human_csv(PATH)` — columns `model`, `score`, optional `task`, `setting` (or `lie`:
  with/without, true/false, 1/0 → "lie"/"no-lie") and `sample` (a sample id, or L-Eval's `query`). A missing
  task or setting means "all": the metric side is then averaged over every task/setting of that model.
- metric scores: `metric_rows_from_run_dir(RUN_DIR)` (our runs' `scores.jsonl`), or the L-Eval family's reader of
  its prediction files (`families.leval.agreement.metric_rows_from_leval_file`).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from academiceval.store.artifacts import read_run_spec, read_scores

ALL = "*"


@dataclass(frozen=True)
class HumanScore:
    model: str
    score: float
    task: str = ALL
    setting: str = ALL
    sample: str | None = None


@dataclass(frozen=True)
class MetricScore:
    model: str
    metric: str
    value: float
    task: str
    setting: str
    sample: str


@dataclass(frozen=True)
class Agreement:
    level: str  # "system" (across models) or "sample" (across answers)
    task: str
    setting: str
    metric: str
    n: int
    kendall_tau: float | None
    kendall_p: float | None
    spearman_rho: float | None
    spearman_p: float | None


def _setting(value: str | None) -> str:
    v = (value or "").strip().lower()
    if v in ("", "*", "all"):
        return ALL
    if v in ("with", "true", "1", "yes", "lie"):
        return "lie"
    if v in ("without", "false", "0", "no", "no-lie"):
        return "no-lie"
    return v


def read_human_csv(path: str | Path) -> list[HumanScore]:
    """Human scores from a CSV (a byte-order mark, as spreadsheet programs write, is allowed). A missing column or
    a score that is not a number is a ValueError naming the file, the line and what to do."""
    out = []
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("model", "score") if c not in (reader.fieldnames or [])]
        if missing:
            have = ", ".join(reader.fieldnames or []) or "none"
            raise ValueError(f"{path}: no {' or '.join(missing)} column (columns: {have}); add a header line")
        for line, row in enumerate(reader, 2):
            try:
                score = float(row["score"])
            except (TypeError, ValueError):
                raise ValueError(f"{path}:{line}: score {row['score']!r} is not a number") from None
            setting = row.get("setting") if row.get("setting") is not None else row.get("lie")
            out.append(
                HumanScore(
                    model=(row["model"] or "").strip(),
                    score=score,
                    task=(row.get("task") or ALL).strip() or ALL,
                    setting=_setting(setting),
                    sample=(row.get("sample") or row.get("sample_id") or row.get("query") or None),
                )
            )
    return out


def metric_rows_from_run_dir(run_dir: str | Path, *, model: str | None = None) -> list[MetricScore]:
    """Our run's per-sample scores (`scores.jsonl`); a record's value is its F, else its overall rate."""
    spec = read_run_spec(Path(run_dir))
    model = model or (spec.model if spec is not None else Path(run_dir).name)
    out = []
    for rec in read_scores(Path(run_dir)):
        if rec.error or not rec.values:
            continue
        value = rec.values.get("f", rec.values.get("overall", next(iter(rec.values.values()))))
        out.append(MetricScore(model, rec.metric, value, rec.task, rec.setting, rec.sample_id))
    return out


def _correlate(xs: list[float], ys: list[float]) -> tuple[float | None, ...]:
    from scipy.stats import kendalltau, spearmanr

    if len(xs) < 2:
        return None, None, None, None
    tau, tau_p = kendalltau(xs, ys)
    rho, rho_p = spearmanr(xs, ys)
    clean = tuple(None if v is None or math.isnan(v) else float(v) for v in (tau, tau_p, rho, rho_p))
    return clean


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values)


def agreement(human: list[HumanScore], metrics: list[MetricScore]) -> list[Agreement]:
    """System-level rows for every (task, setting) of the human file; sample-level rows where samples are given."""
    out: list[Agreement] = []
    groups: dict[tuple[str, str], list[HumanScore]] = defaultdict(list)
    for h in human:
        groups[(h.task, h.setting)].append(h)
    names = sorted({m.metric for m in metrics})
    for (task, setting), hs in sorted(groups.items()):

        def matches(m: MetricScore, task: str = task, setting: str = setting) -> bool:
            return (task == ALL or m.task == task) and (setting == ALL or m.setting == setting)

        chosen = [m for m in metrics if matches(m)]
        h_model: dict[str, list[float]] = defaultdict(list)
        for h in hs:
            h_model[h.model].append(h.score)
        for name in names:
            m_model: dict[str, list[float]] = defaultdict(list)
            for m in chosen:
                if m.metric == name:
                    m_model[m.model].append(m.value)
            models = sorted(set(h_model) & set(m_model))
            xs = [_mean(m_model[k]) for k in models]
            ys = [_mean(h_model[k]) for k in models]
            out.append(Agreement("system", task, setting, name, len(models), *_correlate(xs, ys)))
        with_samples = [h for h in hs if h.sample]
        if with_samples:
            for name in names:
                by_key = {(m.model, m.sample): m.value for m in chosen if m.metric == name}
                pairs = [(by_key[(h.model, h.sample)], h.score) for h in with_samples if (h.model, h.sample) in by_key]
                xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
                out.append(Agreement("sample", task, setting, name, len(pairs), *_correlate(xs, ys)))
    return out
