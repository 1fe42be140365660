"""Aggregate per-sample ScoreRecords into means with seeded 95% bootstrap confidence intervals.

Used by `academiceval score` for its summary table and available to the report. Records are append-only, so
the last record per (sample, metric, config hash) counts. A window (`after`) keeps only papers first
submitted strictly after that date — computed from each record's `published`, no re-run.

Output of `aggregate(...)` (plain JSON-able dict):

    {
      "after": "2024-06-01" | None,
      "n_records": 123,                       # records in the window, after de-duplication
      "groups": [
        {
          "metric": "rouge-l", "config_hash": "…", "task": "abstract", "setting": "zero-shot",
          "n": 40,                           # samples with values
          "errors": 2,                       # samples whose record has an error (no values)
          "values": {"f": {"mean": 0.21, "ci_low": 0.19, "ci_high": 0.23}, "p": {…}, "r": {…}},
          "win_rate": {                      # judge metrics only: pooled (wins + ½ ties) / judged
            "overall": {"rate": 0.55, "judged": 80, "ci_low": 0.45, "ci_high": 0.64}, "novelty": {…}, …
          },
          "judge_failures": 3                # judge metrics only: judgments that could not be read
        }, …
      ]
    }

Groups are sorted by (metric, task, setting); a group pools splits (pass `split=` to restrict).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import date
from typing import Any

import numpy as np

from academiceval.scores.judge import ASPECTS
from academiceval.scores.models import ScoreRecord
from academiceval.scores.windows import in_window

N_BOOT = 1000


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def bootstrap_ci(values: list[float], *, seed: int, n_boot: int = N_BOOT) -> tuple[float, float]:
    """Percentile 95% interval of the mean over `n_boot` resamples (seeded: the same data, the same CI)."""
    if not values:
        return (float("nan"), float("nan"))
    arr = np.asarray(values, dtype=float)
    if len(arr) == 1:
        return (float(arr[0]), float(arr[0]))
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, len(arr), size=(n_boot, len(arr)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def _pooled_ci(num: np.ndarray, den: np.ndarray, *, seed: int, n_boot: int) -> tuple[float, float]:
    """Bootstrap over samples of a ratio of sums (win rate pooled over judgments)."""
    if len(num) < 2 or den.sum() == 0:
        r = float(num.sum() / den.sum()) if den.sum() else float("nan")
        return (r, r)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(num), size=(n_boot, len(num)))
    d = den[idx].sum(axis=1)
    rates = np.where(d > 0, num[idx].sum(axis=1) / np.maximum(d, 1e-12), np.nan)
    lo, hi = np.nanpercentile(rates, [2.5, 97.5])
    return (float(lo), float(hi))


def latest(records: Iterable[ScoreRecord]) -> list[ScoreRecord]:
    """The last record per (sample, metric, config hash), in first-seen order."""
    last: dict[tuple[str, str, str], ScoreRecord] = {}
    for r in records:
        last[(r.sample_id, r.metric, r.config_hash)] = r
    return list(last.values())


def aggregate(
    score_records: Iterable[ScoreRecord],
    *,
    after: date | None = None,
    split: str | None = None,
    n_boot: int = N_BOOT,
) -> dict[str, Any]:
    recs = [r for r in latest(score_records) if in_window(r.published, after) and (split is None or r.split == split)]
    groups: dict[tuple[str, str, str, str], list[ScoreRecord]] = {}
    for r in recs:
        groups.setdefault((r.metric, r.config_hash, r.task, r.setting), []).append(r)
    out: list[dict[str, Any]] = []
    for (metric, chash, task, setting), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][3])):
        ok = [r for r in rs if r.error is None and r.values]
        g: dict[str, Any] = {
            "metric": metric,
            "config_hash": chash,
            "task": task,
            "setting": setting,
            "n": len(ok),
            "errors": len(rs) - len(ok),
            "values": {},
        }
        keys = sorted({k for r in ok for k in r.values})
        is_judge = metric.startswith("judge")
        for k in keys:
            if is_judge and (k.endswith(("_n", "_wins", "_ties")) or k in ("judged", "failed")):
                continue
            vals = [r.values[k] for r in ok if k in r.values]
            lo, hi = bootstrap_ci(vals, seed=_seed(metric, chash, task, setting, k, after), n_boot=n_boot)
            g["values"][k] = {"mean": float(np.mean(vals)), "ci_low": lo, "ci_high": hi}
        if is_judge:
            g["judge_failures"] = int(sum(r.values.get("failed", 0.0) for r in rs))
            g["win_rate"] = {}
            for a in ASPECTS:
                wins = np.array([r.values.get(f"{a}_wins", 0.0) for r in ok])
                ties = np.array([r.values.get(f"{a}_ties", 0.0) for r in ok])
                n = np.array([r.values.get(f"{a}_n", 0.0) for r in ok])
                if n.sum() == 0:
                    continue
                num = wins + 0.5 * ties
                lo, hi = _pooled_ci(num, n, seed=_seed(metric, chash, task, setting, a, after), n_boot=n_boot)
                g["win_rate"][a] = {
                    "rate": float(num.sum() / n.sum()),
                    "judged": int(n.sum()),
                    "ci_low": lo,
                    "ci_high": hi,
                }
        out.append(g)
    return {"after": after.isoformat() if after else None, "n_records": len(recs), "groups": out}
