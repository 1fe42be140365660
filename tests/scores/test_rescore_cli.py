"""score_runs / `academiceval score` on a real run directory; windows; aggregate."""

from __future__ import annotations

import json
from datetime import date

import pytest
from rouge_score import rouge_scorer
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.errors import ConfigError
from academiceval.scores.aggregate import aggregate, bootstrap_mean
from academiceval.scores.config import ScoreConfig
from academiceval.scores.rescore import read_scores, score_runs
from academiceval.scores.windows import find_model, load_model_info, resolve_window
from academiceval.store.models import ScoreRecord

runner = CliRunner()


def test_rouge_scores_equal_rouge_score_and_resume(run_home):
    home, run_dir = run_home
    res = score_runs([run_dir], ScoreConfig(metrics=["rouge-l", "rouge-2"]))[0]
    assert res.written == {"rouge-l": 12, "rouge-2": 12} and res.errors == {"rouge-l": 1, "rouge-2": 1}
    from academiceval.store.artifacts import load_round

    labels = {s.sample_id: s.label for s in load_round(home / "rounds" / "2022-12").samples()}
    outputs = {
        json.loads(line)["sample_id"]: json.loads(line)["output"]
        for line in (run_dir / "abstract-zero-shot.jsonl").read_text().splitlines()
    }
    ref = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    for r in read_scores(run_dir):
        if r.metric == "rouge-l" and r.error is None:
            e = ref.score(labels[r.sample_id], outputs[r.sample_id])["rougeL"]
            assert r.values == {"p": e.precision, "r": e.recall, "f": e.fmeasure}
    again = score_runs([run_dir], ScoreConfig(metrics=["rouge-l"]))[0]
    assert again.written == {"rouge-l": 0} and again.skipped == {"rouge-l": 12}
    # a re-generated output is re-scored (append-only: the newest line wins)
    lines = (run_dir / "abstract-zero-shot.jsonl").read_text().splitlines()
    changed = json.loads(lines[0]) | {"output": "A different answer about random polynomials."}
    with (run_dir / "abstract-zero-shot.jsonl").open("a") as fh:
        fh.write(json.dumps(changed) + "\n")
    third = score_runs([run_dir], ScoreConfig(metrics=["rouge-l"]))[0]
    assert third.written == {"rouge-l": 1}


def test_score_cli_with_bertscore_and_window(run_home):
    home, run_dir = run_home
    result = runner.invoke(
        app, ["score", str(run_dir), "--metrics", "rouge-l,bertscore", "--home", str(home), "--after", "2022-12-21"]
    )
    assert result.exit_code == 0, result.output
    # issue 16: long texts are scored over windows by default, and the metric name says so
    assert "bertscore-all-MiniLM-L6-v2-L6-window" in result.output and "rouge-l" in result.output
    assert "after 2022-12-21" in result.output
    recs = read_scores(run_dir)
    bert = [r for r in recs if r.metric == "bertscore-all-MiniLM-L6-v2-L6-window"]
    assert len(bert) == 12 and sum(1 for r in bert if r.error) == 1
    ok = [r for r in bert if r.error is None]
    assert all(0 < r.values["f"] < 1 and "cand_tokens_cut" in r.details for r in ok)
    # the window keeps only papers after 2022-12-21: 9 of the 11 scored outputs
    summary = aggregate(recs, after=date(2022, 12, 21))
    g = next(g for g in summary if g.metric == "rouge-l")
    assert g.n == sum(1 for r in recs if r.metric == "rouge-l" and r.error is None and r.published > date(2022, 12, 21))
    assert g.n < 11
    # --after-cutoff with a user model-info file
    info = home / "models.yaml"
    info.write_text("models:\n  my-model:\n    release: 2023-01-05\n    knowledge_cutoff: 2022-12-21\n")
    result = runner.invoke(
        app,
        ["score", str(run_dir), "--metrics", "rouge-l", "--after-cutoff", "my-model", "--model-info", str(info)],
    )
    assert result.exit_code == 0, result.output
    assert "2022-12-21" in result.output and "cutoff" in result.output
    bad = runner.invoke(app, ["score", str(run_dir), "--metrics", "bleu"])
    assert bad.exit_code == 2 and "unknown metric" in bad.output
    nojudge = runner.invoke(app, ["score", str(run_dir), "--metrics", "judge"])
    assert nojudge.exit_code == 2 and "--judge" in nojudge.output


def test_missing_round_is_a_clear_error(tmp_path, run_home):
    _, run_dir = run_home
    moved = tmp_path / "elsewhere" / "a" / "b"
    moved.mkdir(parents=True)
    for f in run_dir.iterdir():
        (moved / f.name).write_bytes(f.read_bytes())
    result = runner.invoke(app, ["score", str(moved), "--metrics", "rouge-l"])
    assert result.exit_code == 2 and "--round-dir" in result.output


def test_model_info_lookup_and_windows(tmp_path, monkeypatch):
    table = load_model_info()
    assert find_model("openai/gpt-4o-mini", table).knowledge_cutoff == date(2023, 10, 1)
    assert find_model("hf/meta-llama/Meta-Llama-3.1-8B-Instruct", table).name == "llama-3.1-8b-instruct"
    w = resolve_window(after_cutoff="qwen2.5-7b-instruct")  # no published cutoff: release date, said so
    assert w.after == date(2024, 9, 19) and "release" in w.reason
    user = tmp_path / "info.yaml"
    user.write_text("models:\n  gpt-4o-mini:\n    release: 2024-07-18\n    knowledge_cutoff: 2024-01-01\n")
    monkeypatch.setenv("ACADEMICEVAL_MODEL_INFO", str(user))
    assert resolve_window(after_cutoff="gpt-4o-mini").after == date(2024, 1, 1)  # user entries win
    with pytest.raises(ConfigError):
        resolve_window(after_cutoff="unknown-model-x")
    with pytest.raises(ConfigError):
        resolve_window(after="2024-01-01", after_cutoff="gpt-4o")
    with pytest.raises(ConfigError):
        resolve_window(after="yesterday")
    assert resolve_window().after is None


def _rec(sid: str, pub: date, f: float, metric: str = "rouge-l", **values: float) -> ScoreRecord:
    return ScoreRecord(
        sample_id=sid,
        task="abstract",
        setting="zero-shot",
        split="test",
        published=pub,
        metric=metric,
        config_hash="h",
        values={"f": f, **values} if metric == "rouge-l" else dict(values),
    )


def test_aggregate_means_cis_window_and_dedup():
    recs = [_rec(f"s{i}", date(2024, 1, 1 + i), i / 10) for i in range(10)]
    recs.append(_rec("s0", date(2024, 1, 1), 0.9))  # a later line for s0 replaces the first
    out = aggregate(recs)
    v = out[0].values["f"]
    assert out[0].n == 10 and v.mean == pytest.approx((0.9 + sum(i / 10 for i in range(1, 10))) / 10)
    assert v.ci_low < v.mean < v.ci_high
    assert aggregate(recs) == out  # seeded
    windowed = aggregate(recs, after=date(2024, 1, 5))
    assert windowed[0].n == 5 and windowed[0].values["f"].mean == pytest.approx(sum(i / 10 for i in range(5, 10)) / 5)
    one = bootstrap_mean([0.5], seed=1)
    assert (one.mean, one.ci_low, one.ci_high) == (0.5, None, None)  # the low-n rule: no [x, x] interval
    judge = [
        _rec("a", date(2024, 1, 1), 0, "judge-x", overall=1.0, overall_n=2, overall_wins=2, overall_ties=0, judged=2),
        _rec("b", date(2024, 1, 2), 0, "judge-x", overall=0.25, overall_n=2, overall_wins=0, overall_ties=1, judged=2),
        _rec("c", date(2024, 1, 3), 0, "judge-x", overall=0.0, overall_n=1, overall_wins=0, overall_ties=0, failed=1),
    ]
    g = aggregate(judge)[0]
    assert g.values["win_rate"].mean == pytest.approx(2.5 / 5) and g.values["win_rate"].n == 5
    assert g.failures == 1 and g.primary == "win_rate"
