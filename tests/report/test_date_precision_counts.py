"""Issue 12 leftovers: dates known only to the year keep their precision in `stats` (timespan, window title) and
in the report's "expected but not run" count."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from academiceval.report.results import summarize_run
from academiceval.rounds.split import windows_from_fractions
from academiceval.rounds.stats import ConfigStats, window_title
from academiceval.store.artifacts import LoadedRound, RunData
from academiceval.store.models import RoundManifest, RunRecord, RunSpec, Sample, SplitWindows


def _sample(i: int, year: int, precision: str, split: str = "test") -> Sample:
    return Sample(
        sample_id=f"title/zero-shot/p{i}",
        round="lab",
        task="title",
        setting="zero-shot",
        split=split,
        arxiv_id=f"p{i}",
        paper_id=f"p{i}",
        published=date(year, 1, 1) if precision == "year" else date(year, 3, 5),
        date_precision=precision,
        fields={"abstract": "x"},
        label="t",
        input_tokens=10,
        label_tokens=2,
    )


class _Round(LoadedRound):
    def __init__(self, samples: list[Sample], windows: SplitWindows) -> None:
        manifest = RoundManifest(round="lab", created_at="", package_version="", seed=0, windows=windows)
        super().__init__(Path("."), manifest, "")
        self._samples = samples

    def samples(self, config=None, *, split=None):  # type: ignore[no-untyped-def, override]
        return iter(self._samples)


def test_timespan_shows_year_dates_as_years() -> None:
    def cs(a: date, pa: str, b: date, pb: str) -> ConfigStats:
        return ConfigStats("c", "title", "zero-shot", 1, {}, 0, 0, 0, a, b, 0, pa, pb)  # type: ignore[arg-type]

    assert cs(date(2024, 1, 1), "year", date(2024, 1, 1), "year").timespan() == "2024"
    assert cs(date(2023, 1, 1), "year", date(2025, 1, 1), "year").timespan() == "2023 … 2025"
    assert cs(date(2024, 3, 1), "month", date(2024, 11, 30), "day").timespan() == "2024-03 … 2024-11-30"
    assert cs(date(2024, 3, 5), "day", date(2024, 3, 5), "day").timespan() == "2024-03-05"


def test_window_title_over_year_dates() -> None:
    samples = [_sample(i, 2019 + i, "year", "train") for i in range(5)] + [_sample(9, 2024, "year")]
    w = windows_from_fractions([s.published for s in samples], (0.6, 0.2, 0.2))
    title = window_title(_Round(samples, w))
    assert "01-01" not in title, title
    assert title.startswith("round lab: train ≤ 20") and "· test 2024" in title
    # exact days are shown as days
    day = [_sample(1, 2024, "day")]
    assert "test 2024-03-05" in window_title(
        _Round(day, SplitWindows(test_from=date(2024, 3, 5), test_until=date(2024, 3, 5)))
    )


def test_expected_but_not_run_respects_year_precision() -> None:
    spec = RunSpec(
        round="lab",
        round_manifest_sha256="",
        model="baseline/lead",
        backend="baseline",
        package_version="",
        created_at="",
    )
    done = _sample(1, 2025, "day")
    rec = RunRecord(
        sample_id=done.sample_id, task="title", setting="zero-shot", split="test", arxiv_id="p1",
        published=done.published, prompt_sha256="", output="t",
    )  # fmt: skip
    run = RunData(path=Path("run"), spec=spec, records={rec.sample_id: rec})
    expected = {
        ("title", "zero-shot"): [
            (done.sample_id, done.published, "test", "day"),
            ("title/zero-shot/a", date(2024, 1, 1), "test", "year"),  # "2024": not after 2024-06-01
            ("title/zero-shot/b", date(2024, 7, 1), "test", "day"),  # after: expected, not run
            ("title/zero-shot/c", date(2024, 7, 1), "test"),  # an old 3-tuple still reads as a day
        ]
    }
    rows = summarize_run(run, after=date(2024, 6, 1), expected=expected)
    assert rows and all(r.counts.not_run == 2 for r in rows), [r.counts.not_run for r in rows]
