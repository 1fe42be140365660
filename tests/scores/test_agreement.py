"""Metric–human agreement (Kendall τ, Spearman ρ) on L-Eval's human-evaluation predictions and on run dirs."""

from __future__ import annotations

import csv
import json
from datetime import date
from pathlib import Path

import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.families.leval import agreement as leval_ag
from academiceval.scores import agreement as ag
from academiceval.store.models import ScoreRecord

TABLE5 = Path(__file__).parent / "data" / "leval_human_table5.csv"


@pytest.fixture(scope="module")
def human_eval(corpus: Path) -> list[Path]:
    files = sorted((corpus / "leval" / "Predictions" / "human_eval").glob("*.pred.jsonl"))
    assert len(files) == 7
    return files


def test_system_level_with_the_papers_human_averages(human_eval: list[Path]) -> None:
    metrics = [m for f in human_eval for m in leval_ag.metric_rows_from_leval_file(f, setting="lie")]
    rows = {(r.setting, r.metric): r for r in ag.agreement(ag.read_human_csv(TABLE5), metrics) if r.level == "system"}
    assert rows[("lie", "rouge-l")].n == 3  # Claude-100k, Turbo-16k, Llama2-13b-chat have both
    assert rows[("no-lie", "rouge-l")].n == 0 and rows[("no-lie", "rouge-l")].kendall_tau is None
    # the same number by hand: mean ROUGE-L per model vs the paper's human averages
    models = ["claude-100k", "llama2-13b-chat-4k", "turbo-16k-0613"]
    means = [sum(m.value for m in metrics if m.model == k and m.metric == "rouge-l") / 85 for k in models]
    assert rows[("lie", "rouge-l")].kendall_tau == pytest.approx(kendalltau(means, [4.04, 3.15, 3.58])[0])


def test_setting_is_read_from_the_prompt(human_eval: list[Path]) -> None:
    by_model = {f.name: {m.setting for m in leval_ag.metric_rows_from_leval_file(f)} for f in human_eval}
    assert by_model["turbo-16k-0613.pred.jsonl"] == {"lie"}
    assert by_model["claude-100k.pred.jsonl"] == {"unknown"}  # its rows carry no prompt
    assert by_model["gpt4-32k.pred.jsonl"] == {"no-lie"}  # its 'prompt' is the bare question


def test_sample_level_and_task_index(corpus: Path, human_eval: list[Path], tmp_path: Path) -> None:
    index = leval_ag.leval_task_index(corpus / "leval" / "LEval-data")
    rows = leval_ag.metric_rows_from_leval_file
    metrics = [m for f in human_eval[:3] for m in rows(f, setting="lie", task_index=index)]
    tasks = {m.task for m in metrics if m.metric == "f1"}
    assert {"multidoc_qa", "meeting_summ", "review_summ", "unmatched"} <= tasks  # narrative_qa's file is absent
    human = tmp_path / "human.csv"
    with human.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "task", "lie", "sample", "score"])
        for m in metrics:
            if m.metric == "f1" and m.task == "multidoc_qa":
                w.writerow([m.model, m.task, "with", m.sample, 1 + 4 * m.value])  # a rater who agrees with F1
    rows = ag.agreement(ag.read_human_csv(human), metrics)
    sample_f1 = next(r for r in rows if r.level == "sample" and r.metric == "f1")
    assert sample_f1.task == "multidoc_qa" and sample_f1.setting == "lie" and sample_f1.n == 66
    assert sample_f1.kendall_tau == pytest.approx(1.0) and sample_f1.spearman_rho == pytest.approx(1.0)
    words = next(r for r in rows if r.level == "sample" and r.metric == "words")
    assert words.kendall_tau is not None and words.kendall_tau < 1


def test_cli_on_run_dirs(tmp_path: Path) -> None:
    human = tmp_path / "human.csv"
    human.write_text("model,task,score\nm1,abstract,1\nm2,abstract,2\nm3,abstract,3\n")
    dirs = []
    for k, value in (("m1", 0.1), ("m2", 0.3), ("m3", 0.2)):
        d = tmp_path / "runs" / "2024-01" / k
        d.mkdir(parents=True)
        rec = ScoreRecord(
            sample_id="s1",
            task="abstract",
            setting="zero-shot",
            split="test",
            published=date(2024, 1, 2),
            metric="rouge-l",
            config_hash="x",
            values={"f": value},
        )
        (d / "scores.jsonl").write_text(rec.model_dump_json() + "\n")
        dirs.append(str(d))
    res = CliRunner().invoke(app, ["agreement", str(human), *dirs, "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert (row["level"], row["task"], row["metric"], row["n"]) == ("system", "abstract", "rouge-l", 3)
    assert row["kendall_tau"] == pytest.approx(1 / 3)


def test_human_csv_with_a_byte_order_mark_and_bad_rows(tmp_path: Path) -> None:
    """A spreadsheet's CSV starts with a BOM: read (issue 26 finding 10 was a KeyError); bad rows are one line."""
    from academiceval.scores.agreement import read_human_csv

    bom = tmp_path / "bom.csv"
    bom.write_bytes("model,score\nm1,1\nm2,2.5\n".encode("utf-8-sig"))
    assert [(h.model, h.score) for h in read_human_csv(bom)] == [("m1", 1.0), ("m2", 2.5)]
    bad = tmp_path / "bad.csv"
    bad.write_text("model,score\nm1,1\nm2,high\n")
    with pytest.raises(ValueError, match=r"bad.csv:3: score 'high' is not a number"):
        read_human_csv(bad)
    nohead = tmp_path / "nohead.csv"
    nohead.write_text("m1,1\n")
    res = CliRunner().invoke(app, ["agreement", str(nohead), str(tmp_path)])
    assert res.exit_code == 2 and "no model or score column" in res.output and "Traceback" not in res.output
