"""Chronological split: train, then validation, then test, by v1 date — one definition, dates as options.

Either explicit dates (`val_from`, `test_from`, `test_until`) or fractions of the date-sorted papers. With
fractions a boundary never cuts through one day: test papers must be *strictly* newer than every validation
paper, so each cut moves to the nearest change of date (keeping the test split non-empty where possible).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import date

from academiceval.errors import ConfigError
from academiceval.rounds.models import Split, SplitWindows
from academiceval.sources.dates import date_range
from academiceval.sources.models import DatePrecision

DEFAULT_FRACTIONS = (0.72, 0.19, 0.09)


def check_fractions(fractions: Sequence[float]) -> tuple[float, float, float]:
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-6:
        raise ConfigError(
            f"split fractions must be three non-negative numbers summing to 1, got {list(fractions)}",
            hint="e.g. 0.72,0.19,0.09",
        )
    return (float(fractions[0]), float(fractions[1]), float(fractions[2]))


def _nearest(cands: list[int], target: float, *, upto: int | None = None) -> int:
    pool = [c for c in cands if upto is None or c <= upto]
    return min(pool, key=lambda c: (abs(c - target), c)) if pool else 0


def windows_from_fractions(dates: Sequence[date], fractions: Sequence[float]) -> SplitWindows:
    """Windows for date-sorted papers. Cuts fall on date changes, never inside a day."""
    f = check_fractions(fractions)
    ds = sorted(dates)
    n = len(ds)
    if n == 0:
        return SplitWindows()
    changes = [i for i in range(1, n) if ds[i] != ds[i - 1]]
    cands = [0, *changes, n]
    test_cut = _nearest([c for c in cands if c < n] or [n], n * (f[0] + f[1]))
    if f[2] > 0 and test_cut >= n and changes:
        test_cut = changes[-1]
    val_cands = [c for c in cands if c < test_cut] or [test_cut]
    val_cut = _nearest(val_cands, n * f[0]) if f[1] > 0 else test_cut
    if f[2] == 0:
        test_cut = n
    w = SplitWindows()
    if val_cut > 0:
        w.train_until = ds[val_cut - 1]
    if test_cut > val_cut:
        w.val_from, w.val_until = ds[val_cut], ds[test_cut - 1]
    if n > test_cut:
        w.test_from, w.test_until = ds[test_cut], ds[-1]
    return w


def windows_from_dates(
    dates: Sequence[date], *, val_from: date | None, test_from: date | None, test_until: date | None
) -> SplitWindows:
    if val_from is None or test_from is None:
        raise ConfigError(
            "give both --val-from and --test-from (or neither, to split by fractions)",
            hint="dates are YYYY-MM-DD v1 submission dates",
        )
    if not val_from < test_from:
        raise ConfigError(f"--val-from {val_from} must be before --test-from {test_from}")
    if test_until is not None and test_until < test_from:
        raise ConfigError(f"--test-until {test_until} is before --test-from {test_from}")
    ds = sorted(d for d in dates if test_until is None or d <= test_until)
    w = SplitWindows(val_from=val_from, test_from=test_from, test_until=test_until)
    i = bisect.bisect_left(ds, val_from)
    w.train_until = ds[i - 1] if i > 0 else None
    j = bisect.bisect_left(ds, test_from)
    w.val_until = ds[j - 1] if j > i else None
    if w.test_until is None and len(ds) > j:
        w.test_until = ds[-1]
    return w


def assign(published: date, w: SplitWindows, precision: DatePrecision = "day") -> Split | None:
    """The split of a paper, or None when it lies after the test window or, for a date known only to the month or
    year, when that month/year straddles a window start (a 2024 paper is neither surely before nor surely after
    2024-06-01)."""
    lo, hi = date_range(published, precision)
    if w.test_from is not None and lo >= w.test_from:
        return "test" if w.test_until is None or lo <= w.test_until else None
    if w.test_from is not None and hi >= w.test_from:
        return None
    if w.val_from is not None and lo >= w.val_from:
        return "val"
    if w.val_from is not None and hi >= w.val_from:
        return None
    return "train"
