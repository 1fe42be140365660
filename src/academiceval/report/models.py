"""What `results.json` holds beside its rows: the contamination gaps (`report.contamination`) and the context
ladders (`report.ladder`). Value types only, so the results document (`report.results`) and the modules that
compute these sections import them from one place, and those modules may take a `Results` without a cycle.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel

from academiceval.scores.aggregate import LEVEL
from academiceval.scores.models import Estimate
from academiceval.scores.paired import TEST

METHOD = (
    "before = papers first submitted on or before the cutoff, after = strictly after; gap = before − after with a "
    "95% percentile bootstrap resampling the two groups independently (not paired: different papers)"
)


class GapSide(BaseModel):
    before: Estimate
    after: Estimate
    gap: Estimate  # before − after


class ContaminationGap(BaseModel):
    model: str  # the run's label
    run_dir: str
    cutoff: date
    cutoff_kind: str  # "knowledge cutoff" or "release (no cutoff published)"
    task: str
    setting: str
    metric: str
    value: str
    scores: GapSide
    probe: GapSide | None = None  # the title-only probe run of the same model, when saved
    probe_run_dir: str | None = None
    method: str = METHOD


class Rung(BaseModel):
    tokens: int
    setting: str
    score: Estimate  # over the targets shared by every rung
    diff_to_best: Estimate | None = None  # this rung − the best rung, paired over the same targets (scores.paired)
    p_value: float | None = None  # of the same paired test (None below MIN_N_FOR_INTERVAL targets)
    below_best: bool = False  # significantly below the best rung


class Ladder(BaseModel):
    model: str
    run_dir: str
    task: str
    metric: str
    value: str
    targets: int  # targets scored at every rung
    rungs: list[Rung]
    best: int  # tokens of the best rung
    effective_length: int | None  # the largest rung not significantly below the best one; None: too few targets
    level: float = LEVEL
    test: str = TEST


class DateBucket(BaseModel):
    period: str  # "2024", "2024-Q4" or "2024-10"
    start: date
    score: Estimate


class DateSeries(BaseModel):
    """One run × task × setting's score by the target paper's v1 date (report.by_date)."""

    model: str  # the run's label
    run_dir: str
    task: str
    setting: str
    metric: str
    value: str
    granularity: str  # "year", "quarter" or "month"
    buckets: list[DateBucket]
