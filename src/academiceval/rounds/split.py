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
from academiceval.sources.dates import date_range
from academiceval.store.models import Split, SplitWindows
from academiceval.store.paper_models import DatePrecision

DEFAULT_FRACTIONS = (0.72, 0.19, 0.09)


def check_fractions(fractions: Sequence[float]) -> tuple[float, float, float]:
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-6:
        raise ConfigError(
            f"split fractions must be three non-negative numbers summing to 1, got {list(fractions)}",
            hint="e.g. 0.72,0.19,0.09",
        )
    return (float(fractions[0]), float(fractions[1]), float(fractions[2]))


def _cuts(ds: list[date], f: tuple[float, float, float]) -> tuple[int, int]:
    """The (val_cut, test_cut) pair, both on date changes, whose split sizes come closest to the asked fractions:
    least sum of relative deviations |delivered - asked| / asked (so the small test share counts as much as the
    large train share); ties: smaller largest deviation, then later cuts. A split with a positive fraction is
    kept non-empty whenever the dates allow it."""
    n = len(ds)
    changes = [i for i in range(1, n) if ds[i] != ds[i - 1]]
    cands = [0, *changes, n]
    best: tuple[tuple[float, float, int, int], int, int] | None = None
    for t in cands:
        if f[2] == 0 and t != n:
            continue
        if f[2] > 0 and t == n and changes:
            continue  # a positive test fraction gets a non-empty test split when two dates exist
        for v in cands:
            if v > t or (f[1] == 0 and v != t):
                continue
            got = (v / n, (t - v) / n, (n - t) / n)
            dev = [abs(g - a) / a for g, a in zip(got, f, strict=True) if a > 0]
            empty = sum(1 for g, a in zip(got, f, strict=True) if a > 0 and g == 0)
            no_test = int(f[2] > 0 and t == n)  # the evaluated split first: one date only → everything is test
            key = (no_test, empty, round(sum(dev), 9), round(max(dev, default=0.0), 9), -t, -v)
            if best is None or key < best[0]:
                best = (key, v, t)
    assert best is not None
    return best[1], best[2]


def windows_from_fractions(dates: Sequence[date], fractions: Sequence[float]) -> SplitWindows:
    """Windows for date-sorted papers. Cuts fall on date changes, never inside a day; of all such cuts, the pair
    closest to the asked fractions is taken (`split_report` says how close)."""
    f = check_fractions(fractions)
    ds = sorted(dates)
    n = len(ds)
    if n == 0:
        return SplitWindows()
    val_cut, test_cut = _cuts(ds, f)
    w = SplitWindows()
    if val_cut > 0:
        w.train_until = ds[val_cut - 1]
    if test_cut > val_cut:
        w.val_from, w.val_until = ds[val_cut], ds[test_cut - 1]
    if n > test_cut:
        w.test_from, w.test_until = ds[test_cut], ds[-1]
    return w


def split_report(
    dates: Sequence[date],
    w: SplitWindows,
    fractions: Sequence[float] | None,
    precisions: Sequence[DatePrecision] | None = None,
) -> dict[str, object]:
    """Papers per split, the fractions delivered, their deviation from the asked ones, and warnings (a window
    that is a single day; an asked split left empty). `precisions` (one per date) say how well each date is known:
    a window from 2024-01-01 to 2024-01-01 that holds papers dated only "2024" is that year, not a single day."""
    counts = {"train": 0, "val": 0, "test": 0}
    for d in dates:
        sp = assign(d, w)
        if sp is not None:
            counts[sp] += 1
    n = sum(counts.values())
    delivered = {k: round(v / n, 4) if n else 0.0 for k, v in counts.items()}
    out: dict[str, object] = {"papers": counts, "delivered": delivered, "warnings": []}
    warnings: list[str] = out["warnings"]
    if fractions is not None:
        asked = dict(zip(("train", "val", "test"), map(float, fractions), strict=True))
        out["asked"] = asked
        out["deviation"] = {k: round(delivered[k] - asked[k], 4) for k in asked}
        for k in asked:
            if asked[k] > 0 and counts[k] == 0:
                warnings.append(f"the {k} split is empty although {asked[k]:.0%} was asked")
    coarse = {d for d, p in zip(dates, precisions or (), strict=False) if p != "day"}
    for name, a, b in (("val", w.val_from, w.val_until), ("test", w.test_from, w.test_until)):
        if a is not None and a == b and b not in coarse:
            warnings.append(f"the {name} window is a single day ({a})")
    return out


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
