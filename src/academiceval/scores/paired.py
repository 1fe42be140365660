"""Paired verdicts: two runs scored on the same samples → the score difference per task × setting × metric.

Overlapping confidence intervals of two means are not a verdict: the two runs answered the *same* target
papers, so the honest comparison is over the per-sample differences. For every (metric, configuration, task,
setting) both runs have scores for:

- the shared samples are those both runs scored without error (a sample one run failed is left out, and counted);
- `diff` = mean of (A − B) over the shared samples, and `p_value` = a two-sided paired permutation test of that
  mean (each sample's two scores swapped at random, i.e. the difference's sign flipped; exact over all 2^n sign
  vectors when 2^n ≤ 9,999, else 9,999 seeded random ones plus the observed one);
- the interval of `diff` comes from the same test, inverted: the shifts δ the test does not reject when asked
  whether the differences are centred on δ (a randomization confidence interval). So a difference is
  **significant exactly when its interval excludes 0** — the interval and the verdict are one claim, never a
  bootstrap interval beside a permutation verdict that can disagree with it (issue 28);
- `sign_p` = a two-sided sign test (`scipy.stats.binomtest` on wins of A vs B, ties dropped), for reference;
- `significant` = `p_value < 1 − level` (level 0.95 → α = 0.05);
- fewer than `MIN_N_FOR_INTERVAL` (10) shared samples: the mean difference only — no interval, no p, no verdict
  (`verdict` says "low n"), the package's one low-n rule.

The test, α and the rule are stated in `TEST` / `PairedDiff.test` so every table can say what a mark means.

The value compared is the metric's primary value (F for ROUGE/BERTScore, `score` for the citation metrics…),
as the leaderboard ranks by it. Only records of the same configuration hash are ever paired.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import date

import numpy as np
from pydantic import BaseModel, computed_field

from academiceval.scores.aggregate import LEVEL, derive_seed, latest, primary_value_key
from academiceval.scores.models import Estimate
from academiceval.scores.windows import in_window
from academiceval.store.models import MIN_N_FOR_INTERVAL, ScoreRecord

PERMUTATIONS = 9999
_ROWS_PER_CHUNK = 2048  # sign vectors multiplied at once (bounded memory for long runs)
TEST = (
    "two-sided paired permutation test of the mean difference (sign flips over the shared samples); the interval "
    "is the same test inverted (the differences it does not reject), so a difference is significant exactly when "
    f"its interval excludes 0; fewer than {MIN_N_FOR_INTERVAL} shared samples: no interval, no verdict"
)


class PairedDiff(BaseModel):
    """A − B on the samples both runs scored, for one metric configuration × task × setting."""

    a: str
    b: str
    task: str
    setting: str
    metric: str
    config_hash: str
    value: str  # which value of the metric (its primary: f, score, win_rate…)
    n: int  # shared samples
    only_a: int = 0  # samples scored for A only (or failed in B): not compared
    only_b: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    diff: Estimate  # mean of A − B with the interval of the permutation test inverted (none below MIN_N_FOR_INTERVAL)
    wins_a: int = 0
    wins_b: int = 0
    ties: int = 0
    p_value: float | None = None  # paired permutation test (None below MIN_N_FOR_INTERVAL shared samples)
    sign_p: float | None = None  # sign test
    level: float = LEVEL
    significant: bool = False
    test: str = TEST

    @computed_field  # in the JSON too: the same word every table shows
    @property
    def verdict(self) -> str:
        """'A>B', 'A<B' (significant at the level), '≈' (no significant difference) or 'low n' (fewer than
        MIN_N_FOR_INTERVAL shared samples: too few to say, the low-n rule)."""
        if self.p_value is None:
            return "low n"
        if not self.significant or self.diff.mean is None:
            return "≈"
        return "A>B" if self.diff.mean > 0 else "A<B"


class PairedTest(BaseModel):
    """One paired comparison: the mean difference, its interval and the p of the one test behind both."""

    diff: Estimate
    p_value: float | None = None
    significant: bool = False


def _value(r: ScoreRecord, key: str) -> float | None:
    v = r.values.get(key)
    return v if v is not None and math.isfinite(v) else None


def _sign_vectors(n: int, seed: int, resamples: int) -> np.ndarray:
    """Every sign vector when 2^n ≤ resamples (exact), else the identity plus `resamples` seeded random ones."""
    if 2**n <= resamples:
        grid = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1
        return (1 - 2 * grid).astype(np.int8)  # row 0 = all +1: the observed differences
    rng = np.random.default_rng(seed)
    rand = (1 - 2 * rng.integers(0, 2, size=(resamples, n), dtype=np.int8)).astype(np.int8)
    return np.vstack([np.ones((1, n), dtype=np.int8), rand])


def _acceptance(d: np.ndarray, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each sign vector s, the interval [L_s, U_s] of shifts δ where |mean(s·(d − δ))| ≥ |mean(d − δ)|.

    That inequality is (a − δb)² ≥ (m − δ)² with a = mean(s·d), b = mean(s), m = mean(d): a quadratic in δ with
    leading coefficient b² − 1 ≤ 0 that holds at δ = m, so its solution set is an interval around m (the whole line
    when s is all +1 or all −1). The permutation p at δ is the share of these intervals that hold δ, which never
    grows as δ moves away from m: the accepted shifts form one interval, and 0 is outside it exactly when p(0) < α.
    """
    n = d.size
    m = float(d.mean())
    lo = np.empty(len(signs))
    hi = np.empty(len(signs))
    for start in range(0, len(signs), _ROWS_PER_CHUNK):
        s = signs[start : start + _ROWS_PER_CHUNK].astype(np.float64)
        a = s @ d / n
        b = s.sum(axis=1) / n
        qa = b * b - 1.0
        qb = 2.0 * (m - a * b)
        qc = a * a - m * m
        whole = np.abs(qa) < 1e-12
        safe = np.where(whole, -1.0, qa)
        root = np.sqrt(np.maximum(qb * qb - 4.0 * safe * qc, 0.0))
        r1, r2 = (-qb + root) / (2.0 * safe), (-qb - root) / (2.0 * safe)
        lo[start : start + len(s)] = np.where(whole, -np.inf, np.minimum(r1, r2))
        hi[start : start + len(s)] = np.where(whole, np.inf, np.maximum(r1, r2))
    # ties count as "at least as extreme" (as in scipy's permutation_test): widen by a rounding tolerance
    tol = 1e-9 * max(1.0, float(np.abs(d).max()))
    return lo - tol, hi + tol


def paired_test(
    d: Sequence[float] | np.ndarray, *, seed: int, level: float = LEVEL, resamples: int = PERMUTATIONS
) -> PairedTest:
    """The mean of the paired differences `d` with the interval and p of one sign-flip permutation test.

    Fewer than `MIN_N_FOR_INTERVAL` differences: the mean (and sd) only — no interval, no p, not significant.
    """
    x = np.asarray([v for v in d if v is not None and math.isfinite(v)], dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return PairedTest(diff=Estimate(n=0))
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    if n < MIN_N_FOR_INTERVAL:
        return PairedTest(diff=Estimate(n=n, mean=mean, std=std))
    lo, hi = _acceptance(x, _sign_vectors(n, seed, resamples))
    total = len(lo)
    alpha = 1.0 - level
    need = max(1, math.ceil(round(alpha * total, 9)))  # p(δ) ≥ α ⇔ at least `need` intervals hold δ
    ci_low = float(np.sort(lo)[need - 1])
    ci_high = float(np.sort(hi)[::-1][need - 1])
    snap = 4e-9 * max(1.0, float(np.abs(x).max()))  # a bound that is the mean up to the tie tolerance is the mean
    ci_low, ci_high = (
        (mean if abs(ci_low - mean) <= snap else ci_low),
        (mean if abs(ci_high - mean) <= snap else ci_high),
    )
    p = float(np.count_nonzero((lo <= 0.0) & (hi >= 0.0))) / total
    significant = not (ci_low <= 0.0 <= ci_high)
    return PairedTest(
        diff=Estimate(n=n, mean=mean, std=std, ci_low=ci_low, ci_high=ci_high), p_value=p, significant=significant
    )


def permutation_p(diffs: np.ndarray, *, seed: int, resamples: int = PERMUTATIONS) -> float:
    """Two-sided paired permutation p of mean(diffs) = 0 (exact when 2^n ≤ resamples), whatever n is."""
    x = np.asarray(diffs, dtype=np.float64)
    if x.size < 2 or not np.any(x):
        return 1.0  # one pair: its two sign flips give the same |mean|, so the exact p is 1
    lo, hi = _acceptance(x, _sign_vectors(int(x.size), seed, resamples))
    return float(np.count_nonzero((lo <= 0.0) & (hi >= 0.0))) / len(lo)


def sign_test_p(wins_a: int, wins_b: int) -> float:
    from scipy import stats

    n = wins_a + wins_b
    return 1.0 if n == 0 else float(stats.binomtest(wins_a, n, 0.5).pvalue)


def _by_group(
    records: Iterable[ScoreRecord], after: date | None, split: str | None
) -> dict[tuple[str, str, str, str], dict[str, ScoreRecord]]:
    out: dict[tuple[str, str, str, str], dict[str, ScoreRecord]] = {}
    for r in latest(records):
        if not in_window(r.published, after) or (split is not None and r.split != split):
            continue
        out.setdefault((r.metric, r.config_hash, r.task, r.setting), {})[r.sample_id] = r
    return out


def compare_records(
    a: Iterable[ScoreRecord],
    b: Iterable[ScoreRecord],
    *,
    a_label: str = "A",
    b_label: str = "B",
    after: date | None = None,
    split: str | None = None,
    metrics: Iterable[str] | None = None,
    resamples: int = PERMUTATIONS,
    level: float = LEVEL,
) -> list[PairedDiff]:
    """Paired differences A − B per (metric, config hash, task, setting) present in both, sorted."""
    ga, gb = _by_group(a, after, split), _by_group(b, after, split)
    wanted = list(metrics) if metrics else None
    out: list[PairedDiff] = []
    for key in sorted(set(ga) & set(gb), key=lambda k: (k[0], k[2], k[3], k[1])):
        metric, chash, task, setting = key
        if wanted and not any(metric == m or metric.startswith(m) for m in wanted):
            continue
        ra, rb = ga[key], gb[key]
        vkey = primary_value_key({k for r in [*ra.values(), *rb.values()] if r.error is None for k in r.values})
        xa = {s: v for s, r in ra.items() if r.error is None and (v := _value(r, vkey)) is not None}
        xb = {s: v for s, r in rb.items() if r.error is None and (v := _value(r, vkey)) is not None}
        shared = sorted(set(xa) & set(xb))
        if not shared:
            continue
        va = np.array([xa[s] for s in shared])
        vb = np.array([xb[s] for s in shared])
        d = va - vb
        seed = derive_seed("paired", metric, chash, task, setting, vkey, a_label, b_label, after, split)
        test = paired_test(d, seed=seed, level=level, resamples=resamples)
        wins_a, wins_b = int((d > 0).sum()), int((d < 0).sum())
        out.append(
            PairedDiff(
                a=a_label,
                b=b_label,
                task=task,
                setting=setting,
                metric=metric,
                config_hash=chash,
                value=vkey,
                n=len(shared),
                only_a=len(set(xa) - set(xb)),
                only_b=len(set(xb) - set(xa)),
                mean_a=float(va.mean()),
                mean_b=float(vb.mean()),
                diff=test.diff,
                wins_a=wins_a,
                wins_b=wins_b,
                ties=len(shared) - wins_a - wins_b,
                p_value=test.p_value,
                sign_p=sign_test_p(wins_a, wins_b),
                level=level,
                significant=test.significant,
            )
        )
    return out


def compare_scores(
    a: Mapping[tuple[str, str, str], ScoreRecord], b: Mapping[tuple[str, str, str], ScoreRecord], **kw
) -> list[PairedDiff]:
    """`compare_records` over two `RunData.scores` maps."""
    return compare_records(a.values(), b.values(), **kw)
