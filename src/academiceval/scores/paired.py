"""Paired verdicts: two runs scored on the same samples → the score difference per task × setting × metric.

Overlapping confidence intervals of two means are not a verdict: the two runs answered the *same* target
papers, so the honest comparison is over the per-sample differences. For every (metric, configuration, task,
setting) both runs have scores for:

- the shared samples are those both runs scored without error (a sample one run failed is left out, and counted);
- `diff` = mean of (A − B) over the shared samples with a seeded percentile bootstrap interval over those
  samples (`scores.aggregate.bootstrap_mean`, the package's one bootstrap, seeded from what is compared);
- `p_value` = a two-sided paired permutation test of the mean difference (`scipy.stats.permutation_test`,
  `permutation_type="samples"`: each sample's two scores are swapped at random, i.e. the difference's sign is
  flipped; exact when 2^n ≤ the resample count, else 9,999 seeded resamples);
- `sign_p` = a two-sided sign test (`scipy.stats.binomtest` on wins of A vs B, ties dropped), for reference;
- `significant` = `p_value < 1 − level` (level 0.95 → α = 0.05). The test, α and the bootstrap are stated in
  `TEST` / `PairedDiff.test` so every table can say what a mark means.

The value compared is the metric's primary value (F for ROUGE/BERTScore, `score` for the citation metrics…),
as the leaderboard ranks by it. Only records of the same configuration hash are ever paired.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import date

import numpy as np
from pydantic import BaseModel

from academiceval.scores.aggregate import LEVEL, N_BOOT, bootstrap_mean, derive_seed, latest, primary_value_key
from academiceval.scores.models import Estimate, ScoreRecord
from academiceval.scores.windows import in_window

PERMUTATIONS = 9999
TEST = (
    "two-sided paired permutation test of the mean difference (sign flips over shared samples, scipy "
    "permutation_test); CI: percentile bootstrap over shared samples"
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
    diff: Estimate  # mean of A − B with its bootstrap CI
    wins_a: int = 0
    wins_b: int = 0
    ties: int = 0
    p_value: float | None = None  # paired permutation test
    sign_p: float | None = None  # sign test
    level: float = LEVEL
    significant: bool = False
    test: str = TEST

    @property
    def verdict(self) -> str:
        """'A>B', 'A<B' (significant at the level) or '≈' (no significant difference)."""
        if not self.significant or self.diff.mean is None:
            return "≈"
        return "A>B" if self.diff.mean > 0 else "A<B"


def _value(r: ScoreRecord, key: str) -> float | None:
    v = r.values.get(key)
    return v if v is not None and math.isfinite(v) else None


def permutation_p(diffs: np.ndarray, *, seed: int, resamples: int = PERMUTATIONS) -> float:
    """Two-sided paired permutation p of mean(diffs) = 0 (exact when 2^n ≤ resamples)."""
    from scipy import stats

    if diffs.size < 2 or not np.any(diffs):
        # one pair: its two sign flips give the same |mean|, so the exact p is 1 (scipy refuses n < 2)
        return 1.0
    zeros = np.zeros_like(diffs)
    res = stats.permutation_test(
        (diffs, zeros),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(min(1.0, res.pvalue))


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
    resamples: int = N_BOOT,
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
        diff = bootstrap_mean(d.tolist(), seed=seed, resamples=resamples, level=level)
        wins_a, wins_b = int((d > 0).sum()), int((d < 0).sum())
        p = permutation_p(d, seed=seed)
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
                diff=diff,
                wins_a=wins_a,
                wins_b=wins_b,
                ties=len(shared) - wins_a - wins_b,
                p_value=p,
                sign_p=sign_test_p(wins_a, wins_b),
                level=level,
                significant=p < 1.0 - level,
            )
        )
    return out


def compare_scores(
    a: Mapping[tuple[str, str, str], ScoreRecord], b: Mapping[tuple[str, str, str], ScoreRecord], **kw
) -> list[PairedDiff]:
    """`compare_records` over two `RunData.scores` maps."""
    return compare_records(a.values(), b.values(), **kw)
