"""`academiceval score-predictions --format leval`: one JSON object keyed by each FILE as given."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from academiceval.cli.main import app

REFERENCE = json.loads((Path(__file__).parent / "data" / "leval_reference.json").read_text())["files"]


def test_json_maps_each_file_as_given(corpus: Path, tmp_path: Path) -> None:
    preds = corpus / "leval" / "Predictions"
    rels = [
        "exam_eval/gpt4-32k/coursera.pred.jsonl",
        "exam_eval/turbo-16k-0613/topic_retrieval_longchat.pred.jsonl",
        "ngram_eval/vicuna-13b-16k/scientific_qa.pred.jsonl",
        "ngram_eval/llama2-13b-chat-4k/review_summ.pred.jsonl",
    ]
    given = [os.path.relpath(preds / r, Path.cwd()) for r in rels[:2]] + [str(preds / r) for r in rels[2:]]
    res = CliRunner().invoke(app, ["score-predictions", "--format", "leval", "--json", *given])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert list(out) == given
    for name, rel in zip(given, rels, strict=True):
        assert out[name]["protocol"] == "leval-compatible"
        for key, value in REFERENCE[rel]["reference"].items():
            if key != "rouge/rougeLsum":
                assert out[name][key] == value, (rel, key)
    assert set(out[given[3]]) >= {"rouge/rouge1", "rouge/rouge2", "rouge/rougeL", "rouge/geometric_mean"}
    assert "average_1st_2nd_3rd/exact_match" in out[given[1]]


def test_table_strict_and_errors(corpus: Path, tmp_path: Path) -> None:
    good = str(corpus / "leval" / "Predictions" / "exam_eval" / "gpt4-32k" / "tpo.pred.jsonl")
    bad = tmp_path / "quality.pred.jsonl"
    bad.write_text('{"query": "q", "gt": "A", "evaluation": "exam"}\n')  # no *_pred field
    res = CliRunner().invoke(app, ["score-predictions", "--format", "leval", "--protocol", "strict", good, str(bad)])
    assert res.exit_code == 1
    assert "strict" in res.stdout and "exact_match" in res.stdout and "ValueError" in res.stdout
    res = CliRunner().invoke(app, ["score-predictions", "--format", "helm", good])
    assert res.exit_code == 2


def test_files_are_imported_as_runs_and_scored_once(corpus: Path, tmp_path: Path) -> None:
    """`--home`: each file is a round + run in the workspace, scored with the `leval` metric; a second call finds
    the same run (no record or score written twice); the per-answer scores average to the file's number."""
    from academiceval.store.artifacts import find_run_dirs, load_run

    preds = corpus / "leval" / "Predictions"
    files = [str(preds / "exam_eval" / "gpt4-32k" / "tpo.pred.jsonl"), str(preds / "ngram_eval" / "vicuna-13b-16k"
             / "scientific_qa.pred.jsonl")]  # fmt: skip
    args = ["score-predictions", "--format", "leval", "--json", "--home", str(tmp_path), *files]
    first = CliRunner().invoke(app, args)
    again = CliRunner().invoke(app, args)
    assert first.exit_code == 0 and again.exit_code == 0, first.output
    assert json.loads(first.stdout) == json.loads(again.stdout)
    runs = {load_run(d).spec.round: load_run(d) for d in find_run_dirs([tmp_path / "runs"])}
    assert len(runs) == 2
    tpo = next(r for name, r in runs.items() if name.startswith("pred-tpo-"))
    assert tpo.spec.backend == "predictions" and tpo.spec.model == "predictions/gpt4-x"
    lines = (tpo.path / "leval-tpo.jsonl").read_text().splitlines()
    assert len(lines) == len(tpo.records) == 269 and not tpo.bad_lines  # not appended twice
    scores = [s for s in tpo.scores.values() if s.metric == "leval"]
    assert len(scores) == 269 and len((tpo.path / "scores.jsonl").read_text().splitlines()) == 269
    mean = sum(s.values["exact_match"] for s in scores) / len(scores)
    assert round(mean, 4) == json.loads(first.stdout)[files[0]]["exact_match"] == 84.3866
