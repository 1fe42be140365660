"""The one bootstrap reproduces the intervals of the two it replaced.

The expected numbers were printed by the previous code on this fixed input (commit 8d39dfe:
`scores.aggregate.aggregate` for metric summaries, `report.stats.bootstrap_mean` for the report's paired
few-shot differences), so a change of seed derivation, percentile rule or resampling order fails here.
Metric summaries (the leaderboard's numbers) are bit-identical on any input. The old report bootstrap put its
percentiles at (1 - level) / 2 = 0.025000000000000022 rather than exactly 2.5%, so on some inputs a few-shot
error bar now differs from before in the last bit (about 1e-17); on this input it does not.
"""

from __future__ import annotations

from datetime import date

from academiceval.scores.aggregate import aggregate, bootstrap_mean, derive_seed
from academiceval.store.models import ScoreRecord

VALS = [((i * 37) % 101) / 101 for i in range(40)]


def _rec(i: int, metric: str, values: dict[str, float]) -> ScoreRecord:
    return ScoreRecord(
        sample_id=f"s{i:02d}",
        task="abstract",
        setting="zero-shot",
        split="test",
        published=date(2024, 1, 1 + i % 28),
        metric=metric,
        config_hash="cfg",
        values=values,
    )


def _records() -> list[ScoreRecord]:
    recs = [_rec(i, "rouge-l", {"p": v, "r": 1 - v / 2, "f": v * 0.8}) for i, v in enumerate(VALS)]
    for i in range(15):
        wins, ties = float(i % 3 == 2) * 2, float(i % 3 == 1) * 2
        values = {"overall": (i % 3) / 2, "overall_n": 2.0, "overall_wins": wins, "overall_ties": ties}
        recs.append(_rec(i, "judge-x-vs-reference", values | {"judged": 2.0, "failed": 0.0}))
    return recs


def _triples(summary) -> dict[str, tuple[float | None, float | None, float | None]]:
    return {k: (e.mean, e.ci_low, e.ci_high) for k, e in summary.values.items()}


def test_metric_summaries_reproduce_the_previous_intervals():
    judge, rouge = aggregate(_records())
    assert (rouge.metric, rouge.n, judge.metric, judge.n) == ("rouge-l", 40, "judge-x-vs-reference", 15)
    assert _triples(rouge) == {
        "f": (0.39485148514851487, 0.31683168316831684, 0.4645990099009901),
        "p": (0.4935643564356436, 0.4026856435643565, 0.5864108910891089),
        "r": (0.7532178217821782, 0.7103929455445545, 0.7998855198019802),
    }
    assert _triples(judge) == {"overall": (0.5, 0.3, 0.7), "win_rate": (0.5, 0.3, 0.7)}
    assert judge.values["win_rate"].n == 30 and judge.primary == "win_rate" and rouge.primary == "f"


def test_the_window_is_part_of_the_seed_as_before():
    judge, rouge = aggregate(_records(), after=date(2024, 1, 10))
    assert rouge.n == 20 and judge.n == 5
    assert _triples(rouge) == {
        "f": (0.40792079207920795, 0.31089108910891095, 0.512871287128713),
        "p": (0.5099009900990099, 0.3781930693069307, 0.6248267326732672),
        "r": (0.745049504950495, 0.6819121287128713, 0.809164603960396),
    }
    # 5 samples: below the low-n rule, the mean alone; the win rate rests on 10 judgments, so it keeps its interval
    assert _triples(judge) == {"overall": (0.6, None, None), "win_rate": (0.6, 0.3, 0.9)}
    assert judge.values["win_rate"].n == 10


def test_bootstrap_mean_reproduces_both_previous_seed_rules():
    e = bootstrap_mean(VALS, seed=derive_seed("x", 1))  # scores.aggregate's 64-bit seeds
    assert (e.ci_low, e.ci_high) == (0.4002227722772278, 0.5789665841584158)
    # the report's few-shot differences were seeded with 63 bits (plots.fewshot_effects keeps that)
    e = bootstrap_mean(VALS, seed=derive_seed(20240601, "fewshot", "m", "abstract", "random:1") >> 1)
    assert (e.n, e.mean, e.std) == (40, 0.4935643564356436, 0.2956687956963568)
    assert (e.ci_low, e.ci_high) == (0.40742574257425745, 0.5777537128712872)


def test_same_data_same_interval_and_degenerate_inputs():
    assert bootstrap_mean(VALS, seed=7) == bootstrap_mean(list(VALS), seed=7)
    assert bootstrap_mean(VALS, seed=7) != bootstrap_mean(VALS, seed=8)
    assert bootstrap_mean([], seed=1).mean is None and bootstrap_mean([float("nan")], seed=1).n == 0
    const = bootstrap_mean([0.3] * 12, seed=1)
    assert const.ci_low == const.mean == const.ci_high
    few = bootstrap_mean(VALS[:9], seed=1)  # the low-n rule: below 10 values the mean and sd, no interval
    assert few.n == 9 and few.mean is not None and few.std > 0 and few.ci_low is None and few.ci_high is None
    assert bootstrap_mean(VALS[:10], seed=1).ci_low is not None
    wide = bootstrap_mean(VALS, seed=3, level=0.99)
    narrow = bootstrap_mean(VALS, seed=3, level=0.5)
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high
