"""`academiceval release`: a publishable dataset folder that `datasets` loads, the newest test labels withheld
(LiveBench-style), runnable with `academiceval run`, and scoring that says the labels are withheld."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.store.artifacts import Layout, load_round, load_run
from academiceval.testing.sample_round import write_round, write_sample_round

ROUND = "2022-12-rel"


@pytest.fixture(scope="module")
def home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real round (unarXive sample) whose older half is train and newer half test."""
    h = tmp_path_factory.mktemp("release-ws")
    tmp = write_sample_round(corpus, h / "tmp-round", name=ROUND, max_papers=8, body_chars=2000)
    by_config: dict = {}
    for config in load_round(tmp).configs():
        rows = list(load_round(tmp).samples(config))
        cut = sorted(r.published for r in rows)[len(rows) // 2]
        by_config[config] = [r.model_copy(update={"split": "train" if r.published < cut else "test"}) for r in rows]
    write_round(Layout.of(h).round_dir(ROUND), ROUND, by_config)
    return h


def test_release_loads_with_datasets_and_withholds_the_newest_test_labels(home: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    from academiceval.store.release import verify_checksums

    out = tmp_path / "rel"
    r = CliRunner().invoke(app, ["release", ROUND, str(out), "--home", str(home)])
    assert r.exit_code == 0, r.output
    assert "labels withheld" in r.output
    for name in ("README.md", "LICENSES.md", "SHA256SUMS", "manifest.json"):
        assert (out / name).is_file(), name
    assert not list(out.glob("jsonl/**/*.jsonl"))  # parquet per config, nothing else to load
    assert verify_checksums(out) == []
    assert "unarxive" in (out / "LICENSES.md").read_text()
    assert "license: other" in (out / "README.md").read_text()
    ds = datasets.load_dataset(str(out), "title-zero-shot", cache_dir=str(tmp_path / "hf1"))
    assert set(ds) == {"train", "test"}
    assert all(lab == "" for lab in ds["test"]["label"]) and len(ds["test"]) > 0
    assert all(lab for lab in ds["train"]["label"])
    assert all(f["body"] for f in ds["test"]["fields"])  # inputs are all there
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["release"]["withheld_splits"] == ["test"]
    load_round(out)  # the release is a round: its manifest's sha256s hold

    # --with-labels publishes them; a non-empty OUT is refused without --force
    r = CliRunner().invoke(app, ["release", ROUND, str(out), "--home", str(home), "--with-labels"])
    assert r.exit_code != 0 and "already holds files" in r.output
    r = CliRunner().invoke(app, ["release", ROUND, str(out), "--home", str(home), "--with-labels", "--force"])
    assert r.exit_code == 0, r.output
    ds = datasets.load_dataset(str(out), "title-zero-shot", cache_dir=str(tmp_path / "hf2"))
    assert all(lab for lab in ds["test"]["label"])


def test_run_a_released_round_then_scoring_says_labels_are_withheld(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    assert CliRunner().invoke(app, ["release", ROUND, str(out), "--home", str(home)]).exit_code == 0
    user = tmp_path / "user-ws"  # a user who has only the release
    r = CliRunner().invoke(
        app, ["run", str(out), "--model", "baseline/lead", "--task", "title", "--home", str(user), "--no-cache"]
    )
    assert r.exit_code == 0, r.output
    [run_dir] = [p for p in (user / "runs" / ROUND).iterdir() if p.is_dir()]
    assert run_dir.name == "baseline__lead+release"  # never mixed with a run of the full round
    run = load_run(run_dir)
    assert run.records and all(rec.output for rec in run.records.values())
    r = CliRunner().invoke(app, ["score", str(run_dir), "--metrics", "rouge-l", "--round-dir", str(out)])
    scores = list(load_run(run_dir).scores.values())
    assert scores and all(s.error and s.error.startswith("label withheld") for s in scores), r.output
    # once the labels are out (the full round), the same run scores normally
    r = CliRunner().invoke(
        app, ["score", str(run_dir), "--metrics", "rouge-l", "--round-dir", str(Layout.of(home).round_dir(ROUND))]
    )
    assert r.exit_code == 0, r.output
    latest = load_run(run_dir).scores.values()
    assert any(s.error is None and s.values["f"] > 0 for s in latest)
