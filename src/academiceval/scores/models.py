"""The boundary models between `scores` and everything after it (CLI tables, report, results.json).

`ScoreRecord` is one metric on one sample (a line of `scores.jsonl`). `MetricSummary` is one metric over a
group of samples (a run × task × setting), with an `Estimate` (mean and bootstrap interval) per value (and, for a
run with several epochs, an `EpochSpread` per value); it is
what `scores.aggregate.aggregate` returns, what `academiceval score` prints and what the report stores in
`results.json`. Nothing downstream reads a summary as a dict.

`ScoreRecord` is defined in `academiceval.store.models` (the artifacts layer reads and writes it) and imported
from there.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["EpochSpread", "Estimate", "MetricSummary"]


class Estimate(BaseModel):
    """A mean with its bootstrap interval (`ci_low`/`ci_high` are None when `n` is 0 or below MIN_N_FOR_INTERVAL).

    For a pooled judge win rate, `n` counts judgments (both orders of every judged pair), not samples.
    """

    n: int
    mean: float | None = None
    std: float | None = None  # sample standard deviation (ddof=1; 0.0 when n == 1); None for pooled rates
    ci_low: float | None = None
    ci_high: float | None = None


class EpochSpread(BaseModel):
    """One value over the epochs of a repeated run (`run --epochs N`): the mean of each epoch (a run-level score,
    over the samples answered in that epoch) and their mean and sample standard deviation — the "mean ± sd across
    runs" ElaipBench reports. (The summary's `values` average each sample over its epochs first.)"""

    per_epoch: list[float | None]  # epoch 1, 2, ...: mean over that epoch's scored samples (None: none scored)
    n_per_epoch: list[int]
    mean: float | None = None  # mean of the per-epoch means
    sd: float | None = None  # their sample standard deviation (ddof=1; 0.0 with one epoch)


def _one_epoch(n: int) -> bool:
    return n == 1


def _empty(d: dict) -> bool:
    return not d


class MetricSummary(BaseModel):
    """One metric (one name × configuration) over one run × task × setting.

    `values` holds an Estimate per value the metric records (ROUGE/BERTScore `p`, `r`, `f`; the judge's
    per-pair rates per criterion plus the pooled `win_rate` and `win_rate:<criterion>`); `primary` names the
    one that ranks models. Records with an error are counted in `errors`, never averaged.
    """

    metric: str  # the ScoreRecord metric name (carries model/layer where that matters)
    config_hash: str
    primary: str  # the value key used for ranking, e.g. "f" or "win_rate"
    values: dict[str, Estimate] = Field(default_factory=dict)
    errors: int = 0  # score records with an error (no value), excluded from the means
    failures: int = 0  # judge metrics: judgments that could not be read (after the repair retry)
    task: str = ""
    setting: str = ""
    n: int = 0  # samples with values
    run: str | None = None  # who was scored: the run's label (report) or model spec (score CLI), when known
    # a repeated run: how many epochs were scored, and per value the spread of the per-epoch means (scores.aggregate);
    # left out of the JSON for one epoch, so single-run summaries read as before
    epochs: int = Field(default=1, exclude_if=_one_epoch)
    by_epoch: dict[str, EpochSpread] = Field(default_factory=dict, exclude_if=_empty)

    @property
    def main(self) -> Estimate:
        return self.values.get(self.primary) or Estimate(n=0)
