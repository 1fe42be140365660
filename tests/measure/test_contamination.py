"""The contamination gap on saved runs of real text (unarXive papers of Nov–Dec 2022, ROUGE-L from rouge-score)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from tests.report.conftest import build_saved_runs

from academiceval.report.contamination import bootstrap_gap
from academiceval.store.models import RunSpec

CUTOFF = "2022-12-21"  # 9 sample papers on or before it, 40 after it


@pytest.fixture()
def home(tmp_path, corpus, monkeypatch):
    saved = build_saved_runs(tmp_path / "home", corpus)
    info = tmp_path / "info.yaml"
    info.write_text(f"models:\n  baseline/lead:\n    knowledge_cutoff: {CUTOFF}\n")
    monkeypatch.setenv("ACADEMICEVAL_MODEL_INFO", str(info))
    # the lead model's title-only probe run: the tail run's real outputs and scores, relabelled
    probe = saved.runs_dir / "2022-12-demo" / "baseline__lead__probe"
    shutil.copytree(saved.run_dirs["baseline/tail"], probe)
    spec = RunSpec.model_validate_json((probe / "run.json").read_text())
    (probe / "run.json").write_text(
        spec.model_copy(update={"model": "baseline/lead", "probe": "title-only"}).model_dump_json()
    )
    return saved


def test_gap_before_after_cutoff_from_saved_scores(home, tmp_path):
    from datetime import date

    from academiceval.report.render import make_report

    paths = make_report(home.runs_dir, tmp_path / "rep")
    gaps = paths.results.contamination
    # only the model with a cutoff (lead), never its probe run or the tail model
    assert {g.model for g in gaps} == {"baseline/lead"} and len(gaps) == 4
    cut = date.fromisoformat(CUTOFF)
    for g in gaps:
        vals = home.values[("baseline/lead", g.task, g.setting)]
        before = [f for _, d, f in vals if d <= cut]
        after = [f for _, d, f in vals if d > cut]
        assert g.scores.before.n == len(before) == 9 and g.scores.after.n == len(after)
        assert g.scores.before.mean == pytest.approx(np.mean(before))
        assert g.scores.gap.mean == pytest.approx(np.mean(before) - np.mean(after))
        # 9 papers before the cutoff: below the one low-n rule (10), so the gap has its mean and no interval
        assert g.scores.gap.ci_low is None and g.scores.gap.ci_high is None and g.scores.before.ci_low is None
        tail = home.values[("baseline/tail", g.task, g.setting)]  # the tail run failed one sample
        assert g.probe is not None and g.probe.before.n + g.probe.after.n == len(tail)
    md = paths.leaderboard_md.read_text()
    assert "Contamination gap" in md and "no probe run" not in md and "low n" in md
    html = paths.index_html.read_text()
    assert "Contamination gap" in html and "title-only probe gap" in html
    assert json.loads(paths.results_json.read_text())["contamination"][0]["cutoff"] == CUTOFF


def test_bootstrap_gap_is_seeded_and_covers_a_known_shift():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.5, 0.1, 200), rng.normal(0.3, 0.1, 300)
    e = bootstrap_gap(a.tolist(), b.tolist(), seed=7)
    assert e == bootstrap_gap(a.tolist(), b.tolist(), seed=7)
    assert e.ci_low < 0.2 < e.ci_high and e.ci_low > 0.15
    assert bootstrap_gap([], b.tolist(), seed=1).n == 0
