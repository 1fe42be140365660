"""ElaipBench rows (written here in ElaipBench's schema; the data set is not in the corpus) through the project's
chain: `elaip import` → `academiceval run` (first-choice baseline, fake OpenAI-compatible server) → `academiceval
score` (strict set-match `accuracy`, with SA/MA) → `academiceval report`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.store.artifacts import Layout, load_round, load_run, read_scores

GOLDS = [("SA-MCQ", "A"), ("SA-MCQ", "C"), ("SA-MCQ", "A"), ("MA-MCQ", "AC"), ("MA-MCQ", "B, C, D"), ("SA-MCQ", "AB")]


def cli(*args: str, code: int = 0) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == code, res.output
    return res.output


@pytest.fixture(scope="module")
def rows_file(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = corpus / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    d = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    paper = "\n\n".join(p["text"] for p in d["body_text"])
    sentences = [s for s in paper.split(". ") if len(s.split()) > 8]
    rows = []
    for i, (qtype, answer) in enumerate(GOLDS):
        opts = "\n".join(f"{letter}. option {letter.lower()} of question {i}" for letter in "ABCD")
        rows.append(
            {
                "paper_id": "2212.01234",
                "question_type": qtype,
                "question": f"Which statements about the paper hold? ({i})\n{opts}",
                "answer": answer,
                "relevant_passage": sentences[i],
                "paper_content": paper,
            }
        )
    out = tmp_path_factory.mktemp("elaip") / "elabench.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out


def test_import_run_score_report(rows_file: Path, tmp_path: Path) -> None:
    from academiceval.testing.fake_server import start_in_thread

    home = tmp_path / "ws"
    out = cli("elaip", "import", str(rows_file), "--round", "eb", "--home", str(home), "--setting", "evidence")
    assert "1 rows rejected" in out and "SA-MCQ with 2" in out  # the last row: an SA item with two letters
    loaded = load_round(Layout.of(home).round_dir("eb"))
    samples = list(loaded.samples("elaipbench-evidence"))
    assert [s.label for s in samples] == ["A", "C", "A", "A,C", "B,C,D"]
    assert all(s.task == "elaipbench" and s.setting == "evidence" for s in samples)
    assert samples[1].fields["context"] in (rows_file.read_text())  # the evidence passage, as written
    assert loaded.manifest.notes["elaipbench"] == {"SA-MCQ": 3, "MA-MCQ": 2}

    cli("run", "eb", "--model", "baseline/first-choice", "--home", str(home))
    with start_in_thread() as server:
        cli("run", "eb", "--model", "openai/fake-model", "--base-url", server.url, "--home", str(home))
    first = home / "runs" / "eb" / "baseline__first-choice"
    fake = home / "runs" / "eb" / "openai__fake-model"
    assert {r.output_raw for r in load_run(first).records.values()} == {"<answer>A</answer>"}
    assert len(load_run(fake).records) == 5

    cli("score", str(first), str(fake), "--home", str(home))  # default for a multiple-choice run: accuracy
    got = {s.sample_id: s for s in read_scores(first)}
    assert {s.metric for s in got.values()} == {"accuracy"}
    assert sum(s.values["accuracy"] for s in got.values()) == 2  # the two SA items whose gold is A
    sa = [s.values["accuracy:SA-MCQ"] for s in got.values() if "accuracy:SA-MCQ" in s.values]
    ma = [s.values["accuracy:MA-MCQ"] for s in got.values() if "accuracy:MA-MCQ" in s.values]
    assert (len(sa), sum(sa), len(ma), sum(ma)) == (3, 2, 2, 0)
    fake_scores = read_scores(fake)
    fake_out = {r.sample_id: r.output for r in load_run(fake).records.values()}
    assert len(fake_scores) == 5  # an answer without a closed <answer> tag is unparsed (and wrong), never guessed
    assert all(s.values["unparsed"] == float("</answer>" not in fake_out[s.sample_id]) for s in fake_scores)

    cli("report", "--home", str(home), "--round", "eb")
    md = (home / "reports" / "eb" / "leaderboard.md").read_text()
    assert "## ElaipBench · evidence" in md and "accuracy (accuracy)" in md
    table = md.split("## ElaipBench · evidence", 1)[1]
    assert "0.400" in table and "baseline/first-choice" in table
    results = json.loads((home / "reports" / "eb" / "results.json").read_text())
    row = next(r for r in results["rows"] if r["model"] == "baseline/first-choice")
    values = row["metrics"]["accuracy"]["values"]
    assert values["accuracy:SA-MCQ"]["mean"] == pytest.approx(2 / 3) and values["accuracy:MA-MCQ"]["mean"] == 0


def test_letter_runs_are_sets(tmp_path: Path) -> None:
    from academiceval.scores.mcq import parse_answer_set, score_response

    assert parse_answer_set("<answer>ACD</answer>")[0] == frozenset("ACD")
    assert parse_answer_set("<answer>AE</answer>")[0] is None
    assert score_response("x", "<answer>BCD</answer>", "B,C,D").value == 1.0
    assert score_response("x", "<answer>BC</answer>", "B,C,D").value == 0.0


def test_bad_inputs(rows_file: Path, tmp_path: Path) -> None:
    home = tmp_path / "ws"
    out = cli("elaip", "import", str(rows_file), "--round", "eb", "--home", str(home), "--setting", "bm99", code=2)
    assert "unknown setting 'bm99'" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    out = cli("elaip", "import", str(bad), "--round", "eb", "--home", str(home), code=2)
    assert "JSONDecodeError" in out and "Traceback" not in out
    out = cli("elaip", "import", str(tmp_path / "missing.jsonl"), "--round", "eb", "--home", str(home), code=2)
    assert "is not a file" in out
