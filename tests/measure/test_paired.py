"""Paired verdicts on saved runs of real text (unarXive papers; ROUGE-L from the rouge-score package)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tests.report.conftest import build_saved_runs
from typer.testing import CliRunner

from academiceval.scores.paired import compare_records, permutation_p
from academiceval.store.artifacts import load_run
from academiceval.store.models import ScoreRecord


@pytest.fixture(scope="module")
def saved(tmp_path_factory, corpus):
    return build_saved_runs(tmp_path_factory.mktemp("home"), corpus)


def _records(run_dir: Path) -> list[ScoreRecord]:
    return list(load_run(run_dir).scores.values())


def test_paired_diff_equals_the_per_sample_differences(saved):
    a, b = saved.run_dirs["baseline/lead"], saved.run_dirs["baseline/tail"]
    diffs = compare_records(_records(a), _records(b), a_label="lead", b_label="tail")
    assert {(d.task, d.setting) for d in diffs} == {
        (t, s) for t in ("abstract", "title") for s in ("zero-shot", "random:1")
    }
    for d in diffs:
        va = dict((sid, f) for sid, _, f in saved.values[("baseline/lead", d.task, d.setting)])
        vb = dict((sid, f) for sid, _, f in saved.values[("baseline/tail", d.task, d.setting)])
        shared = sorted(set(va) & set(vb))
        assert d.n == len(shared) and d.only_a == len(va) - len(shared)  # tail's failed sample is left out
        assert d.diff.mean == pytest.approx(np.mean([va[s] - vb[s] for s in shared]))
        assert d.diff.ci_low <= d.diff.mean <= d.diff.ci_high
        assert d.wins_a + d.ties + d.wins_b == d.n
        assert d.value == "f" and 0 <= d.p_value <= 1


def test_identical_runs_are_never_significant_and_a_shifted_run_is(saved):
    a = _records(saved.run_dirs["baseline/lead"])
    same = compare_records(a, a)
    assert same and all(d.diff.mean == 0 and d.p_value == 1.0 and not d.significant for d in same)
    # a run 0.02 better on every real sample: significant, A>B; a run with noise only: not significant
    rng = np.random.default_rng(0)
    better = [r.model_copy(update={"values": {**r.values, "f": r.values["f"] + 0.02}}) if r.values else r for r in a]
    noisy = [
        r.model_copy(update={"values": {**r.values, "f": r.values["f"] + float(rng.normal(0, 1e-3))}})
        if r.values
        else r
        for r in a
    ]
    up = compare_records(better, a)
    assert all(d.significant and d.verdict == "A>B" and d.p_value < 0.001 for d in up)
    assert all(d.diff.ci_low == pytest.approx(0.02) for d in up)
    flat = compare_records(noisy, a)
    assert sum(d.significant for d in flat) <= 1  # 4 tests at α=0.05


def test_seeded_and_only_same_config_paired(saved):
    a, b = _records(saved.run_dirs["baseline/lead"]), _records(saved.run_dirs["baseline/tail"])
    assert compare_records(a, b) == compare_records(list(reversed(a)), b)
    other = [r.model_copy(update={"config_hash": "other"}) for r in b]
    assert compare_records(a, other) == []


def test_permutation_p_is_exact_for_small_samples():
    # 5 positive differences: the exact two-sided sign-flip p is 2/32
    assert permutation_p(np.array([0.1, 0.2, 0.3, 0.4, 0.5]), seed=1) == pytest.approx(2 / 32)


def test_compare_cli_table_and_json(saved, tmp_path):
    from academiceval.cli.main import app

    home = saved.root
    res = CliRunner().invoke(
        app, ["compare", str(saved.run_dirs["baseline/lead"]), "2022-12-demo/baseline__tail", "--home", str(home)]
    )
    assert res.exit_code == 0, res.output
    assert "permutation" in res.output and "A>B" in res.output
    res = CliRunner().invoke(
        app, ["compare", "2022-12-demo/baseline__lead", "2022-12-demo/baseline__tail", "--json", "--home", str(home)]
    )
    rows = json.loads(res.output)
    assert len(rows) == 4 and all(r["significant"] for r in rows)
    bad = CliRunner().invoke(app, ["compare", "../x/y", "2022-12-demo/baseline__tail", "--home", str(home)])
    assert bad.exit_code != 0


def test_report_marks_adjacent_differences(saved, tmp_path):
    from academiceval.report.render import make_report

    home = tmp_path / "h"
    shutil.copytree(saved.root, home)
    paths = make_report(home / "runs", tmp_path / "rep")
    res = paths.results
    assert len(res.paired) == 4 and all(d.a == "baseline/lead" and d.significant for d in res.paired)
    md = paths.leaderboard_md.read_text()
    assert "Paired verdicts between adjacent models" in md and "**significant**" in md
    assert "permutation" in paths.index_html.read_text()
    assert json.loads(paths.results_json.read_text())["paired"][0]["test"].startswith("two-sided")


def test_permutation_p_of_a_single_pair_is_one() -> None:
    """One shared sample (a tiny demo table): scipy's permutation_test refuses n=1; the exact answer is 1."""
    import numpy as np

    from academiceval.scores.paired import permutation_p

    assert permutation_p(np.array([0.3]), seed=0) == 1.0


def _real_diffs(saved) -> list[np.ndarray]:
    """Per-sample differences of every pair of saved runs on every task × setting (real ROUGE-L F)."""
    labels = sorted({k[0] for k in saved.values})
    out = []
    for task, setting in sorted({(k[1], k[2]) for k in saved.values}):
        for i, la in enumerate(labels):
            for lb in labels[i + 1 :]:
                va = {sid: f for sid, _, f in saved.values.get((la, task, setting), [])}
                vb = {sid: f for sid, _, f in saved.values.get((lb, task, setting), [])}
                shared = sorted(set(va) & set(vb))
                if shared:
                    out.append(np.array([va[s] - vb[s] for s in shared]))
    return out


def test_verdict_and_interval_are_one_claim_on_real_differences(saved):
    """Issue 28: significant exactly when the interval shown excludes 0 — over real differences and over the same
    differences shifted by their own mean (so that both verdicts occur), at two levels."""
    from academiceval.scores.paired import paired_test

    cases = [d for d in _real_diffs(saved) if d.size >= 10]
    assert cases
    checked = {True: 0, False: 0}
    for d in cases:
        for shift in (0.0, -float(d.mean()), 0.5 * float(np.std(d)), 0.02):
            for level in (0.95, 0.9):
                t = paired_test(d + shift, seed=3, level=level)
                assert t.diff.ci_low <= t.diff.mean <= t.diff.ci_high
                excludes_zero = not (t.diff.ci_low <= 0.0 <= t.diff.ci_high)
                assert t.significant == excludes_zero == (t.p_value < 1 - level)
                checked[t.significant] += 1
    assert checked[True] and checked[False]


def test_permutation_p_equals_scipys_on_real_differences(saved):
    """The inverted test's p at 0 is scipy's two-sided paired permutation p (exact enumeration, n ≤ 13)."""
    from scipy import stats

    for d in [d for d in _real_diffs(saved) if 2 <= d.size <= 13 and np.any(d)]:
        ref = stats.permutation_test(
            (d, np.zeros_like(d)),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=9999,
            alternative="two-sided",
        ).pvalue
        assert permutation_p(d, seed=0) == pytest.approx(min(1.0, ref), abs=1e-12)


def test_low_n_comparison_has_no_interval_and_no_verdict(saved):
    from academiceval.store.models import MIN_N_FOR_INTERVAL

    a, b = _records(saved.run_dirs["baseline/lead"]), _records(saved.run_dirs["baseline/tail"])
    by_cell: dict[tuple[str, str], list[str]] = {}
    for r in a:
        by_cell.setdefault((r.task, r.setting), []).append(r.sample_id)
    keep = {s for ids in by_cell.values() for s in sorted(ids)[:6]}  # a handful of real samples per task × setting
    few = compare_records([r for r in a if r.sample_id in keep], [r for r in b if r.sample_id in keep])
    assert few and all(d.n < MIN_N_FOR_INTERVAL for d in few)
    for d in few:
        assert d.diff.mean is not None and d.diff.ci_low is None and d.p_value is None
        assert not d.significant and d.verdict == "low n"
        assert d.model_dump(mode="json")["verdict"] == "low n"  # the JSON says the same word


def test_compare_at_80_columns_in_a_pipe_cuts_no_number(saved, tmp_path):
    """Issue 28 item 7: `compare` piped at COLUMNS=80 prints every number of its JSON whole, never "…"."""
    import os
    import subprocess
    import sys

    home = tmp_path / "h"
    shutil.copytree(saved.root, home)
    args = [sys.executable, "-m", "academiceval.cli.main", "compare", "2022-12-demo/baseline__lead"]
    args += ["2022-12-demo/baseline__tail", "--home", str(home)]
    env = {**os.environ, "COLUMNS": "80"}
    text = subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout
    rows = json.loads(subprocess.run([*args, "--json"], capture_output=True, text=True, env=env, check=True).stdout)
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    words = set(text.replace("│", " ").replace("┃", " ").split())
    for r in rows:
        d = r["diff"]
        assert f"{r['mean_a']:.3f}" in words and f"{r['mean_b']:.3f}" in words
        assert f"{d['mean']:+.3f}" in words and f"[{d['ci_low']:+.3f}," in words and f"{d['ci_high']:+.3f}]" in words
