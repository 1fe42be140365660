"""Per-sample ScoreRecords → one `MetricSummary` per metric × run × task × setting, with seeded bootstrap CIs.

Below `MIN_N_FOR_INTERVAL` (10) samples an estimate has its mean and sd but no interval (`ci_low`/`ci_high`
None): the package's one low-n rule, so every table, plot and JSON file that shows these estimates agrees.

This is the only bootstrap in the package: `academiceval score` prints these summaries, the report stores them
in `results.json`, and the report's own estimates (paired few-shot differences) call `bootstrap_mean` too.

Records are append-only, so the last record per (sample, metric, config hash, epoch) counts. A window (`after`) keeps
only papers first submitted strictly after that date — computed from each record's `published`, no re-run.
Summaries are sorted by (metric, task, setting) and pool splits (pass `split=` to restrict).

Repeated runs (`run --epochs N`, ElaipBench's 3 runs): each sample is first averaged over its epochs and the
bootstrap runs over samples (the epochs of one sample are not independent draws of the benchmark); beside that,
`EpochSpread` gives each epoch's mean (a run-level score) and their mean ± sample sd, which is what ElaipBench
reports. With every epoch complete the two means are equal. A group of one epoch is summarized exactly as before.

Why a percentile bootstrap: a round has tens to a few hundred samples per task and setting, and ROUGE/BERTScore
values are bounded and skewed, so an interval without a distributional assumption is the honest one (lm-eval
and inspect_ai report the same). Seeds are derived from what is being estimated (metric, configuration, task,
setting, value, window), never from a global RNG, so the same records always give the same interval.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

from academiceval.scores.models import EpochSpread, Estimate, MetricSummary
from academiceval.scores.windows import in_window
from academiceval.store.models import MIN_N_FOR_INTERVAL, ScoreRecord

N_BOOT = 1000
LEVEL = 0.95
# Resamples × samples above which the index matrix is drawn in chunks (bounded memory; same distribution,
# but a different random stream than one draw). 20M int64 = 160 MB; rounds are far below it.
_CHUNK_CELLS = 20_000_000

# Which value of a metric ranks models, in order of preference (F-measure for overlap metrics, the pooled win
# rate for the judge). Other values (precision, recall, per-criterion rates) are still summarized.
# L-Eval's per-item values (families.leval.scoring.score_item) rank by exact match, or ROUGE-L for its ROUGE tasks.
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
    Fewer than `MIN_N_FOR_INTERVAL` values: no interval (the low-n rule).
    """
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return Estimate(n=0)
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    if n < MIN_N_FOR_INTERVAL:
        return Estimate(n=n, mean=mean, std=std)
    if std == 0.0:
        return Estimate(n=n, mean=mean, std=std, ci_low=mean, ci_high=mean)
    means = _resampled_means(x, np.random.default_rng(seed), resamples)
    lo, hi = np.percentile(means, _tails(level))
    return Estimate(n=n, mean=mean, std=std, ci_low=float(lo), ci_high=float(hi))


def bootstrap_ratio(
    num: Sequence[float], den: Sequence[float], *, seed: int, resamples: int = N_BOOT, level: float = LEVEL
) -> Estimate:
    """sum(num) / sum(den) with a bootstrap interval over samples (a win rate pooled over judgments).

    `n` is sum(den): how many judgments the rate rests on; below `MIN_N_FOR_INTERVAL` of them, no interval.
    """
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    total = float(b.sum())
    if total == 0:
        return Estimate(n=0)
    rate = float(a.sum() / total)
    if total < MIN_N_FOR_INTERVAL:
        return Estimate(n=int(total), mean=rate)
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
    """The last record per (sample, metric, config hash, epoch), in first-seen order."""
    last: dict[tuple[str, str, str, int], ScoreRecord] = {}
    for r in records:
        last[(r.sample_id, r.metric, r.config_hash, r.epoch)] = r
    return list(last.values())


def cell_records(
    records: Iterable[ScoreRecord],
    *,
    task: str,
    setting: str,
    metric: str,
    config_hash: str,
    value: str,
    split: str | None = None,
    after: date | None = None,
) -> list[ScoreRecord]:
    """The latest error-free records of one report cell (task × setting × metric config) that carry `value`, in
    the split and window asked for, by sample id: what the sections that regroup a cell's samples (contamination gap
    by cutoff, score by paper date) resample."""
    recs = [
        r
        for r in latest(records)
        if r.task == task
        and r.setting == setting
        and r.metric == metric
        and r.config_hash == config_hash
        and r.error is None
        and value in r.values
        and (split is None or r.split == split)
        and in_window(r.published, after, r.date_precision)
    ]
    recs.sort(key=lambda r: r.sample_id)
    return recs


def _per_sample_means(records: Sequence[ScoreRecord], key: str) -> list[float]:
    """Each sample's mean of `key` over its epochs, in the order samples first appear."""
    by: dict[str, list[float]] = {}
    for r in records:
        if key in r.values:
            by.setdefault(r.sample_id, []).append(r.values[key])
    return [statistics.fmean(v) for v in by.values()]


def epoch_spread(records: Sequence[ScoreRecord], key: str, epochs: Sequence[int]) -> EpochSpread:
    """The mean of `key` in each epoch (over that epoch's scored samples), and their mean ± sample sd."""
    per, ns = [], []
    for e in epochs:
        vals = [r.values[key] for r in records if r.epoch == e and key in r.values and math.isfinite(r.values[key])]
        per.append(statistics.fmean(vals) if vals else None)
        ns.append(len(vals))
    have = [m for m in per if m is not None]
    return EpochSpread(
        per_epoch=per,
        n_per_epoch=ns,
        mean=statistics.fmean(have) if have else None,
        sd=(statistics.stdev(have) if len(have) > 1 else 0.0) if have else None,
    )


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
    epochs = sorted({r.epoch for r in records})
    repeated = len(epochs) > 1  # several epochs: each sample averaged over its epochs first (module docstring)
    values: dict[str, Estimate] = {}
    spread: dict[str, EpochSpread] = {}
    for k in sorted({k for r in ok for k in r.values}):
        if judge and (k.endswith(_JUDGE_COUNTS) or k in ("judged", "failed")):
            continue
        vals = _per_sample_means(ok, k) if repeated else [r.values[k] for r in ok if k in r.values]
        values[k] = bootstrap_mean(vals, seed=derive_seed(metric, chash, task, setting, k, after), resamples=resamples)
        if repeated:
            spread[k] = epoch_spread(ok, k, epochs)
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
        n=len({r.sample_id for r in ok}) if repeated else len(ok),
        run=run,
        epochs=len(epochs) if repeated else 1,
        by_epoch=spread,
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
