"""`academiceval demo` end to end on the real mirror in ../shared/corpus (quick mode), plus its failure modes."""

from __future__ import annotations

import json
import math
import re
import shutil

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.demo import BASELINES, run_demo
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.store.artifacts import load_run, read_run_spec, write_run_spec


@pytest.mark.slow
@pytest.mark.timeout(1200)  # two quick demos and a user's run between them (the suite's one test of its kind)
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

    # between two demos the user runs a model of their own on the demo round (not scored yet), and an old run of
    # an earlier build of the round lies beside it (its manifest is not this build's)
    home = tmp_path / "home"
    mine = run_round(home, "demo", RunConfig(model="baseline/lead", context_length=8192, limit=12)).run_dir
    label = load_run(mine).label
    assert label == "baseline/lead [ctx=8192]"
    old = mine.with_name("baseline__extractive+earlier-build")
    shutil.copytree(s.run_dirs[1], old)
    spec = read_run_spec(old)
    write_run_spec(old, spec.model_copy(update={"round_manifest_sha256": "0" * 64}))

    # the same command again resumes: the round is reused, nothing of the demo's is generated or scored twice;
    # the user's run is scored with the demo's metrics and ranked beside the baselines; the old one is named
    again = run_demo(corpus, home=home, quick=True, workers=1)
    stage = {st.name: st for st in again.stages}
    assert "reused" in stage["build"].note
    run_rows = dict((str(k), str(v)) for k, v in stage["run"].rows)
    assert all(run_rows[spec].startswith("0 done") for spec in BASELINES)
    assert run_rows[label].startswith("your run, kept on the leaderboard (demo/baseline__lead+ctx8192)")
    assert "baseline__extractive+earlier-build" in stage["run"].note and "earlier build" in stage["run"].note
    assert again.user_runs == [mine] and again.stale_runs == [old]
    score_rows = {str(k): str(v) for k, v in stage["score"].rows[1:]}  # "metric: N new, metric: N new"
    assert all(not re.search(r": [1-9]\d* new", v) for k, v in score_rows.items() if k != label)
    assert re.search(r"rouge-l: [1-9]\d* new", score_rows[label])

    def means(res: dict) -> list:
        return [
            (r["label"], r["task"], r["setting"], {k: m["values"] for k, m in r["metrics"].items()})
            for r in res["rows"]
            if r["label"] != label
        ]

    again_results = json.loads(again.results_json.read_text())
    assert means(again_results) == means(results)
    rows = [r for r in again_results["rows"] if r["label"] == label]
    assert rows and all("rouge-l" in r["metrics"] for r in rows)
    assert label in again.leaderboard_md.read_text() and "earlier-build" not in again.leaderboard_md.read_text()


def test_demo_cli_refuses_a_missing_corpus(tmp_path):
    r = CliRunner().invoke(app, ["demo", "--corpus", str(tmp_path / "nowhere"), "--home", str(tmp_path / "h")])
    assert r.exit_code == 2
    assert "mirror directory not found" in r.output
