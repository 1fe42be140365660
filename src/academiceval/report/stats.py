"""Means with seeded percentile-bootstrap confidence intervals.

A benchmark round has tens to a few hundred samples per task and setting, so a mean without an interval
invites over-reading one-point differences. The percentile bootstrap needs no distributional assumption
(ROUGE/BERTScore values are bounded and skewed) and is what lm-eval and inspect_ai report too. Seeds are
derived from the row's identity, never from a global RNG, so the same records always give the same interval.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

DEFAULT_RESAMPLES = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 20240601


class Estimate(BaseModel):
    """A sample mean with its bootstrap interval (`ci_low`/`ci_high` are None when `n` is 0)."""

    n: int
    mean: float | None = None
    std: float | None = None  # sample standard deviation (ddof=1; 0.0 when n == 1)
    ci_low: float | None = None
    ci_high: float | None = None


def derive_seed(base: int, *parts: object) -> int:
    """A stable 63-bit seed from a base seed and the identity of what is being estimated."""
    key = "|".join([str(base), *(str(p) for p in parts)])
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def bootstrap_mean(
    values: Sequence[float],
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> Estimate:
    """Mean of the finite `values` with a percentile-bootstrap interval at `level`.

    Non-finite values (NaN/inf) are dropped: they mean "no score", which is counted elsewhere as an error.
    """
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return Estimate(n=0)
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    if n == 1 or std == 0.0:
        return Estimate(n=n, mean=mean, std=std, ci_low=mean, ci_high=mean)
    rng = np.random.default_rng(seed)
    # Draw in chunks so memory stays bounded (resamples x n floats) even for large rounds.
    chunk = max(1, min(resamples, 2_000_000 // n))
    means = np.empty(resamples, dtype=np.float64)
    done = 0
    while done < resamples:
        k = min(chunk, resamples - done)
        idx = rng.integers(0, n, size=(k, n))
        means[done : done + k] = x[idx].mean(axis=1)
        done += k
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return Estimate(n=n, mean=mean, std=std, ci_low=float(lo), ci_high=float(hi))
