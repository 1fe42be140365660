"""`academiceval demo` end to end on the real mirror in ../shared/corpus (quick mode), plus its failure modes."""

from __future__ import annotations

import json
import math
import re

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.demo import BASELINES, run_demo


@pytest.mark.slow
def test_demo_end_to_end_quick(corpus, tmp_path):
    seen: dict[str, int] = {}

    def progress(stage: str, done: int, total: int | None, detail: str = "") -> None:
        seen[stage] = seen.get(stage, 0) + 1

    finished = []
    s = run_demo(corpus, home=tmp_path / "home", quick=True, workers=1, progress=progress, on_stage=finished.append)

    assert [st.name for st in s.stages] == [
        "index",
        "collect",
        "fetch + ingest",
        "build",
        "run",
        "score",
        "cloze",
        "report",
    ]
    assert [st.name for st in finished] == [st.name for st in s.stages]
    assert {"index", "collect", "ingest", "build", "run", "report"} <= set(seen)
    for f in (s.index_html, s.leaderboard_md, s.results_json):
        assert f is not None and f.is_file()
    assert (s.report_dir / "examples.html").is_file()
    assert (s.report_dir / "plots" / "settings.svg").is_file()

    results = json.loads(s.results_json.read_text())
    md = s.leaderboard_md.read_text()
    page = s.index_html.read_text()
    for spec in BASELINES:
        assert spec in md and spec in page
        rows = [r for r in results["rows"] if r["model"] == spec]
        assert rows, spec
        rouge = [r["metrics"][k] for r in rows for k in r["metrics"] if k.startswith("rouge-l")]
        assert rouge, f"{spec} has no ROUGE-L score"
        for m in rouge:
            est = m["values"][m["primary"]]
            assert est["n"] > 0 and math.isfinite(est["mean"]) and 0.0 <= est["mean"] <= 1.0
    # the citation-cloze family ran too: accuracy tables per level, the model's pick on the examples page
    assert "citation_cloze" in md and "baseline/lexical-choice" in md and "accuracy" in md
    cloze_rows = [r for r in results["rows"] if r["task"] == "citation_cloze"]
    assert {r["setting"] for r in cloze_rows} == {"easy", "medium", "hard"}
    assert "picked [" in (s.report_dir / "examples.html").read_text()
    # the examples page shows the round's references next to the outputs
    assert "export was not found" not in (s.report_dir / "examples.html").read_text()
    assert s.wall_s > 0

    # the same command again resumes: the round is reused, nothing is generated or scored twice
    again = run_demo(corpus, home=tmp_path / "home", quick=True, workers=1)
    stage = {st.name: st for st in again.stages}
    assert "reused" in stage["build"].note
    assert all(str(v).startswith("0 done") for k, v in stage["run"].rows)
    score_rows = [str(v) for _, v in stage["score"].rows[1:]]  # "metric: N new, metric: N new"
    assert score_rows and all(re.findall(r": \d+ new", v) and not re.search(r": [1-9]\d* new", v) for v in score_rows)

    def means(res: dict) -> list:
        return [
            (r["label"], r["task"], r["setting"], {k: m["values"] for k, m in r["metrics"].items()})
            for r in res["rows"]
        ]

    assert means(json.loads(again.results_json.read_text())) == means(results)


def test_demo_cli_refuses_a_missing_corpus(tmp_path):
    r = CliRunner().invoke(app, ["demo", "--corpus", str(tmp_path / "nowhere"), "--home", str(tmp_path / "h")])
    assert r.exit_code == 2
    assert "mirror directory not found" in r.output
