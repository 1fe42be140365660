"""One run path for the peers' protocols (issue 22 item 3, issue 29 item 2, issue 26 finding 9), on real data:

- ElaipBench's 3 runs are `run --preset elaipbench` (epochs): 3 calls per item through the cache, a rerun asks
  nothing, `score` and the report give mean ± sd across epochs per SA/MA, and `elaip run` is that same path;
- `export --format leval` writes L-Eval prediction files that L-Eval's own `Evaluation/auto_eval.py` (the copy in
  the corpus) scores exactly as `score-predictions --format leval` does; `leval run` is `run` + that export;
- an outage is never an answer: the aliases and the export refuse to turn failed requests into predictions.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.store.artifacts import load_run
from academiceval.testing.fake_server import start_in_thread

GOLDS = [("SA-MCQ", "A"), ("SA-MCQ", "C"), ("SA-MCQ", "B"), ("MA-MCQ", "AC"), ("MA-MCQ", "BCD"), ("SA-MCQ", "D")]


def cli(*args: str, code: int = 0) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == code, res.output
    return res.output


@pytest.fixture(scope="module")
def rows_file(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows in ElaipBench's schema over a real paper (the data set itself is not in the corpus)."""
    d = json.loads((corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl").open().readline())
    paper = "\n\n".join(p["text"] for p in d["body_text"])
    sents = [s for s in paper.split(". ") if len(s.split()) > 8]
    rows = []
    for i, (qtype, answer) in enumerate(GOLDS * 2):  # 12 questions: 8 SA, 4 MA
        opts = "\n".join(f"{letter}. {sents[i + 10 + k][:60]}" for k, letter in enumerate("ABCD"))
        rows.append(
            {
                "paper_id": "2212.01234",
                "question_type": qtype,
                "question": f"Which statements hold? ({i})\n{opts}",
                "answer": answer,
                "relevant_passage": sents[i],
                "paper_content": paper,
            }
        )
    out = tmp_path_factory.mktemp("elaip") / "elabench.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out


def test_elaipbench_three_epochs_mean_sd_per_type_and_the_alias(rows_file: Path, tmp_path: Path) -> None:
    from academiceval.models.cache import ResponseCache

    home = str(tmp_path / "ws")
    cli("elaip", "import", str(rows_file), "--round", "eb", "--home", home, "--setting", "evidence")
    with start_in_thread() as srv:
        srv.server.config.answer_choices = True  # one letter per (prompt, seed): epochs differ, as sampling would
        run = ["run", "eb", "-m", "openai/fake-model", "--base-url", srv.url, "--home", home, "--preset", "elaipbench"]
        out = cli(*run)
        assert "3 epochs" in out and srv.stats.total == 36  # 12 items × 3 epochs
        assert set(srv.stats.by_prompt.values()) == {3} and {s for _, s in srv.stats.by_prompt_seed} == {None, 1, 2}
        run_dir = tmp_path / "ws" / "runs" / "eb" / "openai__fake-model+elaipbench"
        recs = load_run(run_dir).epoch_records
        assert len(recs) == 36 and {e for _, e in recs} == {1, 2, 3}
        assert all(r.error is None and not r.cached and r.attempts == 1 for r in recs.values())
        cache = ResponseCache.in_workspace(Path(home))
        assert cache.count() == 36  # three cache rows per item, one per epoch's seed
        cache.close()
        cli(*run)  # the same command again: every (item, epoch) is finished, no request
        assert srv.stats.total == 36

        out = cli("score", str(run_dir), "--home", home)
        assert "across 3 epochs" in out and "  accuracy:SA-MCQ: " in out and "  accuracy:MA-MCQ: " in out
        summary = next(m for m in load_summary(run_dir))
        by = summary.by_epoch
        assert summary.epochs == 3 and summary.n == 12
        # by hand from the records: each epoch's accuracy, then mean ± sd (ElaipBench's protocol)
        gold = {f"elaipbench/{i}/evidence": set(a) for i, (_, a) in enumerate(GOLDS * 2)}
        keys = (("accuracy", ("SA-MCQ", "MA-MCQ")), ("accuracy:SA-MCQ", ("SA-MCQ",)), ("accuracy:MA-MCQ", ("MA-MCQ",)))
        for key, types in keys:
            per = []
            for e in (1, 2, 3):
                hits = [
                    set(r.output_raw.removeprefix("<answer>").removesuffix("</answer>")) == gold[sid]
                    for (sid, ep), r in recs.items()
                    if ep == e and GOLDS[int(sid.split("/")[1]) % 6][0] in types
                ]
                per.append(sum(hits) / len(hits))
            assert by[key].per_epoch == pytest.approx(per)
            mean = sum(per) / 3
            assert by[key].mean == pytest.approx(mean)
            assert by[key].sd == pytest.approx((sum((p - mean) ** 2 for p in per) / 2) ** 0.5)
        assert summary.values["accuracy"].mean == pytest.approx(by["accuracy"].mean)  # every epoch complete

        cli("report", "--round", "eb", "--home", home)
        md = (tmp_path / "ws" / "reports" / "eb" / "leaderboard.md").read_text()
        assert "Across epochs (accuracy)" in md
        sa = by["accuracy:SA-MCQ"]
        assert f"{sa.mean:.3f} ± {sa.sd:.3f}" in md
        results = json.loads((tmp_path / "ws" / "reports" / "eb" / "results.json").read_text())
        row = results["rows"][0]
        assert row["counts"]["epochs"] == 3 and row["counts"]["samples"] == 12
        assert row["metrics"]["accuracy"]["by_epoch"]["accuracy:MA-MCQ"]["mean"] == pytest.approx(
            by["accuracy:MA-MCQ"].mean
        )

        # `elaip run` = import + `run --preset elaipbench` + score: the same numbers; rerun asks nothing
        alias = ["elaip", "run", str(rows_file), "--model", "openai/fake-model", "--base-url", srv.url]
        alias += ["--setting", "evidence", "--home", home, "--json"]
        got = json.loads(cli(*alias))
        assert srv.stats.total == 36  # its own round holds the same prompts: every answer came from the cache
        assert got["runs"] == 3 and got["failed_requests"] == {}
        assert got["SA-MCQ"]["mean_accuracy"] == pytest.approx(100 * sa.mean)
        assert got["SA-MCQ"]["sd_accuracy"] == pytest.approx(100 * sa.sd)
        assert got["all"]["per_run"] == pytest.approx([100 * p for p in by["accuracy"].per_epoch])
        assert json.loads(cli(*alias))["all"] == got["all"] and srv.stats.total == 36

        # the chain-of-thought variant: 4,096 new tokens and ElaipBench's step-by-step line, 3 epochs
        before = srv.stats.total
        cot = json.loads(cli(*alias, "--cot"))
        assert srv.stats.total == before + 36 and cot["cot"] is True
        cot_dir = Path(cot["run_dir"])
        assert cot_dir.name == "openai__fake-model+elaipbench-cot"
        spec = load_run(cot_dir).spec
        assert spec.options["max_tokens"] == 4096 and spec.options["temperature"] == 0.1
        assert "step by step" in spec.config["prompt_suffix"]


def load_summary(run_dir: Path):
    from academiceval.scores.aggregate import aggregate
    from academiceval.store.artifacts import read_scores

    return aggregate(read_scores(run_dir))


@pytest.fixture()
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's default retry policy with short backoffs (an outage test need not sleep ~15 s per request)."""
    import functools

    from academiceval.models.retry import RetryPolicy
    from academiceval.runs import runner

    monkeypatch.setattr(runner, "RetryPolicy", functools.partial(RetryPolicy, initial_s=0.001))


def test_elaip_alias_outage_is_no_accuracy(rows_file: Path, tmp_path: Path, fast_retries: None) -> None:
    """Before: `elaip run` against a server failing every request printed accuracy 0.0 and exited 0."""
    with start_in_thread() as srv:
        srv.server.config.fail_all = 503
        args = ["elaip", "run", str(rows_file), "--model", "openai/fake-model", "--base-url", srv.url, "--runs", "2"]
        res = CliRunner().invoke(app, [*args, "--setting", "evidence", "--home", str(tmp_path / "ws"), "--json"])
    assert res.exit_code == 1, res.output
    got = json.loads(res.stdout)
    assert got["failed_requests"] == {"server_error": 24} and got["all"]["mean_accuracy"] is None
    assert got["all"]["per_run"] == [None, None] and "answers missing" in res.output


# ---- L-Eval: export --format leval, scored by L-Eval's own code -----------------------------------------------

# datasets >= 3 removed `datasets.Metric`; L-Eval's LEvalMetrics subclasses it only for `compute(**inputs)` calling
# `_compute`. This stand-in gives exactly that; everything else runs L-Eval's own code from the corpus, unchanged
# (auto_eval.py's answer processing and aggregation, em.py, f1.py, rouge.py on rouge-score).
AUTO_EVAL = """
import os, runpy, sys, types
fake = types.ModuleType("datasets")
class Metric:
    def __init__(self, config_name=None, **kw):
        self.config_name = config_name or "default"
    def compute(self, *, predictions, references):
        return self._compute(predictions=predictions, references=references)
fake.Metric, fake.MetricInfo, fake.Features = Metric, (lambda **kw: kw), (lambda d: d)
fake.Value, fake.Sequence, fake.load_dataset = (lambda t: t), (lambda t: [t]), None
sys.modules["datasets"] = fake
leval = sys.argv[1]
sys.path.insert(0, os.path.join(leval, "Evaluation"))
for pred in sys.argv[2:]:
    sys.argv = ["auto_eval.py", "--pred_file", pred]
    print("=== " + pred, flush=True)
    runpy.run_path(os.path.join(leval, "Evaluation", "auto_eval.py"), run_name="__main__")
"""


def auto_eval(corpus: Path, files: list[Path], tmp: Path) -> dict[str, dict[str, float]]:
    """L-Eval's auto_eval.py on each file; nltk's punkt model is untrained (empty files: no download here), as in
    tests/scores/data/make_leval_reference.py — rouge1/2/L do not depend on the sentence split."""
    punkt = tmp / "nltk" / "tokenizers" / "punkt_tab" / "english"
    punkt.mkdir(parents=True)
    for name in ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab"):
        (punkt / name).write_text("")
    env = dict(os.environ, NLTK_DATA=str(tmp / "nltk"), PYTHONDONTWRITEBYTECODE="1")  # nothing written in the corpus
    args = [sys.executable, "-c", AUTO_EVAL, str(corpus / "leval"), *map(str, files)]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, cwd=tmp, check=True)
    out: dict[str, dict[str, float]] = {}
    for block in proc.stdout.split("=== ")[1:]:
        name, _, text = block.partition("\n")
        d = ast.literal_eval([ln for ln in text.splitlines() if ln.startswith("{") and "display_keys" in ln][-1])
        out[name] = {k: v for k, v in d.items() if isinstance(v, int | float) and k != "rouge/rougeLsum"}
    return out


def test_export_leval_scored_by_leval_auto_eval_equals_score_predictions(corpus: Path, tmp_path: Path) -> None:
    home = str(tmp_path / "ws")
    tasks = "tpo,coursera,gsm100,news_summ,financial_qa"  # exam (choice, multi-choice, math), rouge, f1
    cli("leval", "import", str(corpus / "leval" / "LEval-data"), "--round", "lv", "--tasks", tasks, "--home", home)
    with start_in_thread() as srv:
        cli("run", "lv", "-m", "openai/fake-model", "--base-url", srv.url, "--limit", "40", "--home", home)
    run_dir = tmp_path / "ws" / "runs" / "lv" / "openai__fake-model+lie"
    preds = tmp_path / "preds"
    cli("export", str(run_dir), "--format", "leval", "--out", str(preds), "--home", home)
    files = sorted(preds.glob("*.pred.jsonl"))
    assert [f.name.removesuffix(".pred.jsonl") for f in files] == sorted(tasks.split(","))
    rows = [json.loads(x) for x in (preds / "tpo.pred.jsonl").read_text().splitlines()]
    assert len(rows) == 40 and list(rows[0])[:5] == ["query", "gt", "fake-model_pred", "evaluation", "prompt"]
    ours = json.loads(cli("score-predictions", "--format", "leval", "--json", *map(str, files)))
    theirs = auto_eval(corpus, files, tmp_path)
    assert set(theirs) == {str(f) for f in files}
    for f in files:
        mine = ours[str(f)]
        assert theirs[str(f)] == {k: mine[k] for k in theirs[str(f)]}, f.name
        assert mine["rows"] == len(f.read_text().splitlines()) == min(40, {"news_summ": 12}.get(mine["task"], 40))
    assert {"exact_match", "f1", "rouge/rougeL"} <= {k for t in theirs.values() for k in t}
    cli("export", str(run_dir), "--format", "leval", "--out", str(preds), "--home", home, code=2)  # files exist
    out = cli("export", str(run_dir), "--format", "leval", "--out", str(run_dir / "p"), "--home", home, code=2)
    assert "lies inside" in out and not (run_dir / "p").exists()  # its rows would be read as run records
    cli("export", str(run_dir), "--format", "leval", "--out", str(preds), "--home", home, "--force")


def test_export_and_leval_run_refuse_an_outage(corpus: Path, tmp_path: Path, fast_retries: None) -> None:
    """Before: `leval run` wrote empty predictions for failed requests, which scored exact_match 0.0."""
    home = str(tmp_path / "ws")
    data = str(corpus / "leval" / "LEval-data")
    cli("leval", "import", data, "--out", str(tmp_path / "lv"), "--tasks", "tpo")
    with start_in_thread() as srv:
        srv.server.config.fail_all = 500
        args = ["leval", "run", str(tmp_path / "lv"), "--model", "openai/fake-model", "--base-url", srv.url]
        out = cli(*args, "--out", str(tmp_path / "preds"), "--home", home, code=1)
        assert "answers missing" in out and "server_error" in out and not (tmp_path / "preds").exists()
        run_dir = tmp_path / "ws" / "runs" / "lv" / "openai__fake-model+lie"
        export = ["export", str(run_dir), "--format", "leval", "--round-dir", str(tmp_path / "lv")]
        out = cli(*export, "--out", str(tmp_path / "p2"), code=1)
        assert "request failed: server_error" in out and "nothing written" in out and not (tmp_path / "p2").exists()
        assert "--partial" in out  # the way to export what was answered (here: nothing) is named
        srv.server.config.fail_all = None  # the outage ends: the alias asks only what failed and writes the files
        cli(*args, "--out", str(tmp_path / "preds"), "--home", home)
    rows = [json.loads(x) for x in (tmp_path / "preds" / "tpo.pred.jsonl").read_text().splitlines()]
    assert len(rows) == 269 and all(r["fake-model_pred"] and r["error"] is None for r in rows)
