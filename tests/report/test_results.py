"""The results schema and its numbers, on saved runs of real text (see conftest)."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from academiceval.report.results import Results, build_results
from academiceval.scores.aggregate import bootstrap_mean, derive_seed

CUT = date(2022, 12, 21)


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def test_schema_round_trip(saved_runs, tmp_path):
    res = build_results(saved_runs.runs_dir)
    path = res.write(tmp_path)
    assert path.name == "results.json"
    back = Results.read(path)
    assert back == res
    assert back.model_dump(mode="json") == json.loads(path.read_text())
    # one row per run × task × setting, each naming round, manifest hash, model and backend
    assert len(res.rows) == 2 * 2 * 2
    for row in res.rows:
        assert row.round == "2022-12-demo" and len(row.round_manifest_sha256) == 64
        assert row.backend == "baseline" and row.options == {"temperature": 0.0}
        assert "rouge-l" in row.metrics and row.metrics["rouge-l"].primary == "f"


def test_means_and_intervals_match_the_saved_scores(saved_runs):
    res = build_results(saved_runs.runs_dir)
    for row in res.rows:
        vals = [v for _, _, v in saved_runs.values[(row.model, row.task, row.setting)]]
        est = row.metrics["rouge-l"].values["f"]
        assert est.n == len(vals) == row.counts.scored
        assert est.mean == pytest.approx(float(np.mean(vals)), abs=1e-12)
        assert est.ci_low <= est.mean <= est.ci_high
        # the percentile interval agrees with the normal approximation to within sampling noise
        half = 1.96 * float(np.std(vals, ddof=1)) / math.sqrt(len(vals))
        assert (est.ci_high - est.ci_low) / 2 == pytest.approx(half, rel=0.3)


def test_intervals_are_seeded_and_reproducible(saved_runs):
    a = build_results(saved_runs.runs_dir)
    b = build_results(saved_runs.runs_dir)
    assert [r.metrics for r in a.rows] == [r.metrics for r in b.rows]
    vals = [v for _, _, v in saved_runs.values[("baseline/lead", "abstract", "zero-shot")]]
    e1 = bootstrap_mean(vals, seed=derive_seed(1, "x"))
    e2 = bootstrap_mean(vals, seed=derive_seed(2, "x"))
    assert e1.mean == e2.mean and (e1.ci_low, e1.ci_high) != (e2.ci_low, e2.ci_high)


def test_intervals_do_not_depend_on_record_order(saved_runs):
    from academiceval.store.artifacts import find_run_dirs, load_run

    runs = [load_run(d) for d in find_run_dirs([saved_runs.runs_dir])]
    shuffled = []
    for r in runs:
        r2 = load_run(r.path)
        r2.scores = dict(reversed(list(r2.scores.items())))
        r2.records = dict(reversed(list(r2.records.items())))
        r2.epoch_scores = dict(reversed(list(r2.epoch_scores.items())))  # what the report aggregates
        r2.epoch_records = dict(reversed(list(r2.epoch_records.items())))
        shuffled.append(r2)
    a, b = build_results(runs), build_results(shuffled)
    assert [r.metrics for r in a.rows] == [r.metrics for r in b.rows]


def test_intervals_are_the_same_in_every_process(saved_runs):
    """String hashing differs between processes; intervals must not (they once did, via set order)."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, json; from academiceval.report.results import build_results; "
        "r = build_results(sys.argv[1]); print(json.dumps([x.model_dump(mode='json')['metrics'] for x in r.rows]))"
    )
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        p = subprocess.run(
            [sys.executable, "-c", code, str(saved_runs.runs_dir)], env=env, capture_output=True, text=True
        )
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout)
    assert outs[0] == outs[1]


def test_bootstrap_edge_cases():
    assert bootstrap_mean([], seed=1).mean is None
    one = bootstrap_mean([0.25], seed=1)
    assert (one.n, one.mean, one.ci_low, one.ci_high) == (1, 0.25, None, None)  # low n: no [x, x] interval
    nan = bootstrap_mean([0.5, float("nan"), 0.7], seed=1)
    assert nan.n == 2 and nan.mean == pytest.approx(0.6)


def test_errors_and_truncation_are_counted(saved_runs):
    res = build_results(saved_runs.runs_dir)
    for row in res.rows:
        n = len(saved_runs.papers)
        assert row.counts.samples == n
        assert row.counts.errors == (1 if row.model == "baseline/tail" else 0)
        assert row.metrics["rouge-l"].errors == row.counts.errors
        assert row.counts.scored == n - row.counts.errors
        assert row.counts.truncated_pct == pytest.approx(100 * row.counts.truncated / n, abs=0.01)
        assert 0 < row.counts.truncated < n


def test_window_recomputes_from_saved_records_without_rerunning(saved_runs):
    before = _tree_digest(saved_runs.runs_dir)
    full = build_results(saved_runs.runs_dir)
    win = build_results(saved_runs.runs_dir, after=CUT, after_reason="test cutoff")
    assert _tree_digest(saved_runs.runs_dir) == before  # nothing was rewritten or re-scored
    inside = sum(1 for p in saved_runs.papers if p.published > CUT)
    assert 0 < inside < len(saved_runs.papers)
    assert win.window.after == CUT and win.window.reason == "test cutoff"
    for f, w in zip(full.rows, win.rows, strict=True):
        assert (f.label, f.task, f.setting) == (w.label, w.task, w.setting)
        assert w.counts.samples == inside
        assert w.counts.outside_window == len(saved_runs.papers) - inside
        vals = [v for _, pub, v in saved_runs.values[(w.model, w.task, w.setting)] if pub > CUT]
        assert w.metrics["rouge-l"].main.n == len(vals)
        assert w.metrics["rouge-l"].main.mean == pytest.approx(float(np.mean(vals)), abs=1e-12)


def test_empty_window_is_not_an_error(saved_runs):
    res = build_results(saved_runs.runs_dir, after=date(2030, 1, 1))
    assert res.rows and all(r.counts.samples == 0 for r in res.rows)
    assert all(r.metrics == {} for r in res.rows)


def test_resumed_and_rescored_lines_last_one_wins(saved_runs, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(saved_runs.root, home)
    run = home / "runs" / "2022-12-demo" / "baseline__lead"
    scores = run / "scores.jsonl"
    first = json.loads(scores.read_text().splitlines()[0])
    first["values"] = {"p": 1.0, "r": 1.0, "f": 1.0}
    with scores.open("a") as fh:
        fh.write(json.dumps(first) + "\n")
        fh.write("{torn line\n")
    res = build_results(home / "runs")
    row = next(
        r for r in res.rows if r.model == "baseline/lead" and r.task == first["task"] and r.setting == first["setting"]
    )
    vals = dict((sid, v) for sid, _, v in saved_runs.values[("baseline/lead", row.task, row.setting)])
    vals[first["sample_id"]] = 1.0
    assert row.metrics["rouge-l"].main.n == len(vals)
    assert row.metrics["rouge-l"].main.mean == pytest.approx(float(np.mean(list(vals.values()))))
    assert any("scores.jsonl" in p and "not JSON" in p for p in res.problems)


def test_one_metric_name_with_two_configurations_is_never_mixed(saved_runs, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(saved_runs.root, home)
    scores = home / "runs" / "2022-12-demo" / "baseline__lead" / "scores.jsonl"
    lines = scores.read_text().splitlines()
    other = []
    for line in lines:
        d = json.loads(line)
        d["config_hash"] = "cfg-other-stemmer"
        other.append(json.dumps(d))
    scores.write_text("\n".join(lines + other) + "\n")
    res = build_results(home / "runs")
    lead = [r for r in res.rows if r.model == "baseline/lead"]
    assert all(set(r.metrics) == {"rouge-l@cfg-rl", "rouge-l@cfg-othe"} for r in lead)
    from academiceval.report.leaderboard import to_markdown

    md = to_markdown(res)  # every column names its metric key and the value shown
    assert "Ranked by **rouge-l@cfg-othe (f)**" in md or "Ranked by **rouge-l@cfg-rl (f)**" in md
    assert "rouge-l@cfg-othe (f)" in md and "rouge-l@cfg-rl (f)" in md
    tail = [r for r in res.rows if r.model == "baseline/tail"]
    assert all(set(r.metrics) == {"rouge-l@cfg-rl"} for r in tail)  # comparable with lead's same config
