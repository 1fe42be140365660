"""The `report` command's terminal table at 80 columns in a pipe: one column of numbers per metric under a short
name (the full name printed below), model names whole, every mean equal to results.json's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from academiceval.cli.report import short_metric_names
from academiceval.scores.bertscore import BertScorer

SRC = Path(__file__).resolve().parents[2] / "src"


def test_report_table_fits_80_columns_with_a_column_per_metric(saved_runs, tmp_path: Path) -> None:
    out = tmp_path / "report"
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(SRC)}
    args = [sys.executable, "-m", "academiceval.cli.main", "report", "--home", str(saved_runs.root), "--out", str(out)]
    text = subprocess.run(args, capture_output=True, text=True, env=env, check=True, timeout=300).stdout
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, text
    header = next(line for line in lines if "model" in line and "┃" in line)
    assert [h.strip() for h in header.strip("┃").split("┃")] == ["model", "task", "setting", "n", "errors", "rouge-l"]
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines if line.startswith("│")]
    results = json.loads((out / "results.json").read_text())
    expected = []
    for r in results["rows"]:
        summary = r["metrics"]["rouge-l"]
        mean = summary["values"][summary["primary"]]["mean"] if summary["primary"] in summary["values"] else None
        expected.append([r["label"], r["task"], r["setting"], str(r["counts"]["samples"]), str(r["counts"]["errors"]),
                         "—" if mean is None else f"{mean:.3f}"])  # fmt: skip
    assert rows == expected  # one line per row: no model name or number folded
    assert any(r[4] != "0" for r in rows)  # baseline/tail has an error: the errors column stays


def test_short_metric_names_keep_the_family_when_it_is_unique() -> None:
    window = BertScorer(long_inputs="window").metric_name
    idf = BertScorer(long_inputs="window", idf=True).metric_name
    assert short_metric_names(["rouge-l", window]) == {"rouge-l": "rouge-l", window: "bertscore"}
    # two BERTScore variants side by side: the family would not say which is which
    assert short_metric_names(["rouge-l", window, idf]) == {"rouge-l": "rouge-l", window: window, idf: idf}
    assert short_metric_names(["exact_match", "f1"]) == {"exact_match": "exact_match", "f1": "f1"}
