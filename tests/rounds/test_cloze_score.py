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
