"""Failures are not answers (issue 26, finding 9): a server that fails every request, or answers garbage, leaves
samples without an answer — recorded as failures with their own code, reported, a non-zero exit — and never a
score of 0 (`tests/rounds/test_run_aliases.py` shows the same for the L-Eval export and the ElaipBench alias)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.models.retry import RetryPolicy
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.store.artifacts import load_run, read_epoch_records, read_scores


@pytest.mark.parametrize("kind", ["malformed", "nonstring"])
def test_garbled_answers_are_malformed_response_even_when_the_wait_runs_out(sample_round, fake_server, tmp_path, kind):
    """Before: a request whose retries outlived --max-wait on garbled bodies was recorded as rate_limited."""
    srv = fake_server(permanent={kind: 1.0})
    config = RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["title"], settings=["zero-shot"], limit=3)
    for policy in (RetryPolicy(max_attempts=3, initial_s=0.01), RetryPolicy(max_attempts=6, max_wait_s=0.001)):
        summary = run_round(tmp_path / f"ws-{policy.max_wait_s}", sample_round, config, retry_policy=policy)
        recs = read_epoch_records(summary.run_dir).values()
        assert {r.error_code for r in recs} == {"malformed_response"}, [r.error for r in recs]
        assert all(r.retryable and not r.output for r in recs)
        assert summary.failures() == {"malformed_response": 3}


def test_an_outage_is_a_failed_run_not_an_accuracy_of_zero(sample_round, fake_server, tmp_path):
    """Every request fails: `run` says so and exits 1; `score` writes error records and prints no number."""
    srv = fake_server(fail_all=500)
    home = tmp_path / "ws"
    args = ["run", str(sample_round), "-m", "openai/fake-model", "--base-url", srv.url, "--home", str(home)]
    args += ["--task", "title", "--setting", "zero-shot", "--epochs", "2"]
    res = CliRunner().invoke(app, [*args, "--max-wait", "1"])
    assert res.exit_code == 1, res.output
    assert "answers missing" in res.output and "server_error" in res.output
    run_dir = next((home / "runs").rglob("run.json")).parent
    recs = read_epoch_records(run_dir)
    assert recs and {r.error_code for r in recs.values()} == {"server_error"}
    assert all(r.retryable and r.output == "" for r in recs.values())

    score = ["score", str(run_dir), "--metrics", "rouge-l", "--round-dir", str(sample_round)]
    res = CliRunner().invoke(app, score)
    assert res.exit_code == 1, res.output  # the run it scored has samples without an answer
    assert "answers missing" in res.output
    scores = read_scores(run_dir)
    assert len(scores) == len(recs) and all(s.error and not s.values for s in scores)  # errors, not zeros
    summary = load_run(run_dir)
    assert summary.epochs == 2 and all(s.error.startswith("no output to score") for s in summary.epoch_scores.values())
    table = [ln for ln in res.output.splitlines() if "rouge-l" in ln and ln.startswith("│")]
    assert table and all(ln.rstrip(" │|").endswith("-") for ln in table), res.output  # no mean, no 0.000

    srv.server.config.fail_all = None  # the outage ends: the same command asks only what failed, exit 0
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert all(r.error is None for r in read_epoch_records(run_dir).values())
    score = ["score", str(run_dir), "--metrics", "rouge-l", "--round-dir", str(sample_round)]
    res = CliRunner().invoke(app, score)
    assert res.exit_code == 0, res.output
    latest = load_run(run_dir).epoch_scores.values()
    assert len(latest) == len(recs) and all(s.error is None and s.values for s in latest)
