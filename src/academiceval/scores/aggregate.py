"""Per-sample ScoreRecords → one `MetricSummary` per metric × run × task × setting, with seeded bootstrap CIs.

This is the only bootstrap in the package: `academiceval score` prints these summaries, the report stores them
in `results.json`, and the report's own estimates (paired few-shot differences) call `bootstrap_mean` too.

Records are append-only, so the last record per (sample, metric, config hash) counts. A window (`after`) keeps
only papers first submitted strictly after that date — computed from each record's `published`, no re-run.
Summaries are sorted by (metric, task, setting) and pool splits (pass `split=` to restrict).

Why a percentile bootstrap: a round has tens to a few hundred samples per task and setting, and ROUGE/BERTScore
values are bounded and skewed, so an interval without a distributional assumption is the honest one (lm-eval
and inspect_ai report the same). Seeds are derived from what is being estimated (metric, configuration, task,
setting, value, window), never from a global RNG, so the same records always give the same interval.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

from academiceval.scores.models import Estimate, MetricSummary, ScoreRecord
from academiceval.scores.windows import in_window

N_BOOT = 1000
LEVEL = 0.95
# Resamples × samples above which the index matrix is drawn in chunks (bounded memory; same distribution,
# but a different random stream than one draw). 20M int64 = 160 MB; rounds are far below it.
_CHUNK_CELLS = 20_000_000

# Which value of a metric ranks models, in order of preference (F-measure for overlap metrics, the pooled win
# rate for the judge). Other values (precision, recall, per-criterion rates) are still summarized.
# L-Eval's per-item values (scores.leval.score_item) rank by exact match, or ROUGE-L for its ROUGE tasks.
PRIMARY_VALUE_KEYS = ("f", "f1", "fmeasure", "win_rate", "overall", "score", "mean", "value", "exact_match", "rougeL")
_JUDGE_COUNTS = ("_n", "_wins", "_ties")


def derive_seed(*parts: object) -> int:
    """A stable 64-bit seed from the identity of what is being estimated."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def _tails(level: float) -> list[float]:
    tail = round(50.0 * (1.0 - level), 10)  # 0.95 -> exactly 2.5 (not 2.5000000000000018)
    return [tail, 100.0 - tail]


def _resampled_means(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    n = x.size
    if resamples * n <= _CHUNK_CELLS:
        return x[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    chunk = max(1, _CHUNK_CELLS // n)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, chunk):
        k = min(chunk, resamples - start)
        means[start : start + k] = x[rng.integers(0, n, size=(k, n))].mean(axis=1)
    return means


def bootstrap_mean(
    values: Sequence[float | None], *, seed: int, resamples: int = N_BOOT, level: float = LEVEL
) -> Estimate:
    """Mean of the finite `values` with a percentile-bootstrap interval at `level` (seeded: same data, same CI).

    Non-finite values (None/NaN/inf) are dropped: they mean "no score", which is counted elsewhere as an error.
    """
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return Estimate(n=0)
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    if n == 1 or std == 0.0:
        return Estimate(n=n, mean=mean, std=std, ci_low=mean, ci_high=mean)
    means = _resampled_means(x, np.random.default_rng(seed), resamples)
    lo, hi = np.percentile(means, _tails(level))
    return Estimate(n=n, mean=mean, std=std, ci_low=float(lo), ci_high=float(hi))


def bootstrap_ratio(
    num: Sequence[float], den: Sequence[float], *, seed: int, resamples: int = N_BOOT, level: float = LEVEL
) -> Estimate:
    """sum(num) / sum(den) with a bootstrap interval over samples (a win rate pooled over judgments).

    `n` is sum(den): how many judgments the rate rests on.
    """
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    total = float(b.sum())
    if total == 0:
        return Estimate(n=0)
    rate = float(a.sum() / total)
    if len(a) < 2:
        return Estimate(n=int(total), mean=rate, ci_low=rate, ci_high=rate)
    idx = np.random.default_rng(seed).integers(0, len(a), size=(resamples, len(a)))
    d = b[idx].sum(axis=1)
    rates = np.where(d > 0, a[idx].sum(axis=1) / np.maximum(d, 1e-12), np.nan)
    lo, hi = np.nanpercentile(rates, _tails(level))
    return Estimate(n=int(total), mean=rate, ci_low=float(lo), ci_high=float(hi))


def primary_value_key(keys: Iterable[str]) -> str:
    ks = list(keys)
    for k in PRIMARY_VALUE_KEYS:
        if k in ks:
            return k
    return sorted(ks)[0] if ks else "f"


def latest(records: Iterable[ScoreRecord]) -> list[ScoreRecord]:
    """The last record per (sample, metric, config hash), in first-seen order."""
    last: dict[tuple[str, str, str], ScoreRecord] = {}
    for r in records:
        last[(r.sample_id, r.metric, r.config_hash)] = r
    return list(last.values())


def _is_judge(metric: str) -> bool:
    return metric.startswith("judge")


def summarize_group(
    metric: str,
    chash: str,
    task: str,
    setting: str,
    records: Sequence[ScoreRecord],
    *,
    after: date | None = None,
    resamples: int = N_BOOT,
    run: str | None = None,
) -> MetricSummary:
    """One metric × configuration over one task × setting (the records are already windowed and de-duplicated).

    The bootstrap resamples positions, so callers pass records in a fixed order (e.g. by sample id).
    """
    ok = [r for r in records if r.error is None and r.values]
    judge = _is_judge(metric)
    values: dict[str, Estimate] = {}
    for k in sorted({k for r in ok for k in r.values}):
        if judge and (k.endswith(_JUDGE_COUNTS) or k in ("judged", "failed")):
            continue
        vals = [r.values[k] for r in ok if k in r.values]
        values[k] = bootstrap_mean(vals, seed=derive_seed(metric, chash, task, setting, k, after), resamples=resamples)
    failures = 0
    if judge:
        failures = int(sum(r.values.get("failed", 0.0) for r in records))
        aspects = sorted({k[: -len("_n")] for r in ok for k in r.values if k.endswith("_n")})
        for a in aspects:  # pooled over judgments: (wins + ½ ties) / judged
            n = [r.values.get(f"{a}_n", 0.0) for r in ok]
            if sum(n) == 0:
                continue
            num = [r.values.get(f"{a}_wins", 0.0) + 0.5 * r.values.get(f"{a}_ties", 0.0) for r in ok]
            name = "win_rate" if a == "overall" else f"win_rate:{a}"
            seed = derive_seed(metric, chash, task, setting, a, after)
            values[name] = bootstrap_ratio(num, n, seed=seed, resamples=resamples)
    return MetricSummary(
        metric=metric,
        config_hash=chash,
        primary=primary_value_key(values),
        values=dict(sorted(values.items())),
        errors=len(records) - len(ok),
        failures=failures,
        task=task,
        setting=setting,
        n=len(ok),
        run=run,
    )


def aggregate(
    score_records: Iterable[ScoreRecord],
    *,
    after: date | None = None,
    split: str | None = None,
    resamples: int = N_BOOT,
    run: str | None = None,
) -> list[MetricSummary]:
    """One MetricSummary per (metric, config hash, task, setting) of the records in the window."""
    recs = [
        r
        for r in latest(score_records)
        if in_window(r.published, after, r.date_precision) and (split is None or r.split == split)
    ]
    groups: dict[tuple[str, str, str, str], list[ScoreRecord]] = {}
    for r in recs:
        groups.setdefault((r.metric, r.config_hash, r.task, r.setting), []).append(r)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][3]))
    return [
        summarize_group(metric, chash, task, setting, rs, after=after, resamples=resamples, run=run)
        for (metric, chash, task, setting), rs in ordered
    ]
