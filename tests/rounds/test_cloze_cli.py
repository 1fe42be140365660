"""`academiceval cloze build|import` through the real command line (typer's CliRunner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from academiceval.cli.main import app


def test_cli_build_and_import(scalar_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "ws"
    shutil.copytree(scalar_home, home)
    runner = CliRunner()
    base = ["cloze", "build", "--home", str(home), "--level", "easy", "--set", "max_questions=5"]
    r = runner.invoke(app, [*base, "--round", "c1", "--preset", "scalar", "--after", "none"])
    assert r.exit_code == 0, r.output
    assert "citation_cloze-easy" in r.output and "blind guessers" in r.output and "item defects" in r.output
    manifest = json.loads((home / "rounds" / "c1" / "manifest.json").read_text())
    assert manifest["counts"]["citation_cloze-easy"]["test"] == 5
    assert manifest["build_options"]["construction"] == "scalar" and manifest["build_options"]["cutoff"] is None
    # the default: the filtered construction with the live cutoff of the workspace (no writing round here: the
    # writing split's newest window over the stored papers' dates)
    r = runner.invoke(app, [*base, "--round", "c3"])
    assert r.exit_code == 0, r.output
    assert "live cutoff: 20" in r.output and "newest" in r.output
    manifest = json.loads((home / "rounds" / "c3" / "manifest.json").read_text())
    assert manifest["build_options"]["construction"] == "filtered" and manifest["build_options"]["cutoff"]
    scalar_easy = ["--level", "easy", "--preset", "scalar", "--after", "none", "--strict"]
    strict = runner.invoke(app, ["cloze", "build", "--home", str(home), "--round", "c5", *scalar_easy])
    assert strict.exit_code != 0 and "refused" in strict.output and not (home / "rounds" / "c5").exists()
    bad = runner.invoke(app, [*base, "--round", "c4", "--after", "2024-13-01"])
    assert bad.exit_code != 0 and "--after" in bad.output
    bad = runner.invoke(app, ["cloze", "build", "--round", "c2", "--home", str(home), "--set", "nonsense=1"])
    assert bad.exit_code != 0 and "nonsense" in bad.output
    # import: one published question in SCALAR's schema, one broken file
    q = tmp_path / "cloze_examples_medium"
    q.mkdir()
    prompt = (
        "Pick.\n\n<Paper>\n\n## 1 Intro\nWe use **[MASKED_CITATION]** here.</Paper>\n\n<References>\n"
        + "\n".join(f"<Candidate>Candidate [{i}]:\nPaper {i}</Candidate>\n" for i in range(4))
        + "\n</References>\nRemember to output the index enclosed within <answer> and </answer>."
    )
    rec = {
        "paper_id": "http://arxiv.org/abs/2410.01234v1",
        "question": prompt,
        "label_id": 2,
        "id": 0,
        "candidates": [{"id": i, "title": f"Paper {i}", "token_count": 3} for i in range(4)],
        "citation": {"citation_type": "others", "citation_text": "[3]"},
    }
    (q / "2410.01234_0.json").write_text(json.dumps(rec))
    (q / "2410.01234_1.json").write_text("[1, 2")
    r = runner.invoke(app, ["cloze", "import", str(q), "--round", "pub", "--home", str(home)])
    assert r.exit_code == 0, r.output
    assert "unreadable JSON" in r.output and (home / "rounds" / "pub" / "manifest.json").is_file()
