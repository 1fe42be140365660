"""Run → score (accuracy) → report for a cloze round, through the generic runner, registry and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("academiceval.scores.registry")
pytest.importorskip("academiceval.runs.config")


def test_run_score_report_cloze(scalar_round, tmp_path: Path) -> None:
    from academiceval.report.render import make_report
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.mcq import accuracy_by_level, item_scores_from_records
    from academiceval.scores.rescore import score_runs
    from academiceval.store.artifacts import read_scores

    ws, report = scalar_round
    runs = []
    for spec in ("baseline/random-choice", "baseline/lexical-choice"):
        res = run_round(ws, report.path, RunConfig(model=spec, splits=["test"], limit=8))
        runs.append(Path(res.run_dir))
    # no --metrics: a multiple-choice run defaults to accuracy
    results = score_runs(runs, ScoreConfig(), home=ws.home)
    for res in results:
        assert set(res.written) == {"accuracy"}
        recs = read_scores(res.run_dir)
        assert recs and all(r.metric == "accuracy" and r.values["accuracy"] in (0.0, 1.0) for r in recs)
        assert all(r.details["parser"] == "strict" and r.details["rule"] == "tag" for r in recs)
        acc = accuracy_by_level(item_scores_from_records(recs), n_boot=200)
        assert set(acc) >= {"easy", "medium", "hard", "all"} and acc["all"].unparsed == 0
    score_runs(runs, ScoreConfig(metrics=["rouge-l"]), home=ws.home)  # another metric does not take the ranking
    paths = make_report(runs, tmp_path / "report", rounds_dir=ws.rounds_dir)
    md = paths.leaderboard_md.read_text()
    assert "## Citation cloze · easy" in md and "Ranked by **accuracy" in md and "Ranked by **rouge" not in md
    html = paths.examples_html.read_text()
    assert "picked [" in html and "MASKED_CITATION" in html
    doc = json.loads(paths.results_json.read_text())
    assert doc


def test_cli_score_defaults_to_accuracy_for_cloze_runs(scalar_round, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from academiceval.cli.main import app
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round
    from academiceval.scores.config import stored_option
    from academiceval.store.artifacts import read_scores

    ws, report = scalar_round
    res = run_round(ws, report.path, RunConfig(model="baseline/random-choice", splits=["test"], limit=3))
    r = CliRunner().invoke(app, ["score", str(res.run_dir), "--home", str(ws.home), "--mcq-parser", "lenient"])
    assert r.exit_code == 0, r.output
    recs = [x for x in read_scores(Path(res.run_dir)) if stored_option(x.config, "accuracy", "parser") == "lenient"]
    assert recs and {x.metric for x in recs} == {"accuracy"} and {x.details["parser"] for x in recs} == {"lenient"}


def test_report_shows_cloze_accuracy_by_paper_date(scalar_round, tmp_path: Path) -> None:
    """On a real built round (SCALAR's 6 annotated papers): one series per level, periods of the papers' v1
    dates, each bucket's accuracy and n recomputed from the score records; writing-style sections untouched."""
    from collections import defaultdict

    from academiceval.report.by_date import granularity, period_of
    from academiceval.report.render import make_report
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round
    from academiceval.scores.config import ScoreConfig
    from academiceval.scores.rescore import score_runs
    from academiceval.store.artifacts import read_scores

    ws, report = scalar_round
    res = run_round(ws, report.path, RunConfig(model="baseline/lexical-choice", splits=["test"]))
    run = Path(res.run_dir)
    score_runs([run], ScoreConfig(), home=ws.home)
    recs = [r for r in read_scores(run) if r.metric == "accuracy" and r.error is None]
    paths = make_report([run], tmp_path / "report", rounds_dir=ws.rounds_dir)
    series = paths.results.by_date
    assert {s.setting for s in series} == {"easy", "medium", "hard"}
    for s in series:
        mine = [r for r in recs if r.setting == s.setting]
        unit = granularity([r.published for r in mine])
        assert s.granularity == unit and s.metric == "accuracy"
        expected: dict[str, list[float]] = defaultdict(list)
        for r in mine:
            expected[period_of(r.published, unit)[0]].append(r.values["accuracy"])
        assert [b.period for b in s.buckets] == sorted(expected, key=lambda p: period_of_start(p))
        for b in s.buckets:
            vals = expected[b.period]
            assert b.score.n == len(vals) and b.score.mean == pytest.approx(sum(vals) / len(vals))
            if b.score.n >= 10:
                assert b.score.ci_low is not None and b.score.ci_low <= b.score.mean <= b.score.ci_high
            else:
                assert b.score.ci_low is None  # the low-n rule
        assert sum(b.score.n for b in s.buckets) == len(mine)
    md = paths.leaderboard_md.read_text()
    assert "## Score by paper date (multiple-choice tasks)" in md
    assert "Score by paper date" in paths.index_html.read_text()
    doc = json.loads(paths.results_json.read_text())
    assert len(doc["by_date"]) == 3


def period_of_start(label: str):
    """Sort key of a period label ("2024", "2024-Q4", "2024-10")."""
    year, _, rest = label.partition("-")
    if not rest:
        return (int(year), 0)
    return (int(year), int(rest[1:]) * 3 - 2 if rest.startswith("Q") else int(rest))
