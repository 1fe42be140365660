"""store.artifacts: the one place that names workspace paths and reads/writes rounds, runs and scores."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.rounds.config import BuildConfig
from academiceval.runs.config import RunConfig
from academiceval.scores.config import ScoreConfig
from academiceval.store.artifacts import (
    RUN_SPEC,
    SCORES,
    ArtifactError,
    Layout,
    RecordWriter,
    artifact_name,
    check_name,
    iter_jsonl,
    load_round,
    load_run,
    read_run_records,
    records_file,
    safe_name,
    setting_slug,
    write_run_spec,
)
from academiceval.store.models import RunRecord, RunSpec, ScoreRecord


def _record(i: int) -> RunRecord:
    return RunRecord(
        sample_id=f"title/zero-shot/{i}",
        task="title",
        setting="zero-shot",
        split="test",
        arxiv_id=str(i),
        published=date(2022, 12, 1),
        prompt_sha256="x",
        output=f"answer {i}",
    )


def _spec() -> RunSpec:
    return RunSpec(
        round="r1",
        round_manifest_sha256="0" * 64,
        model="baseline/lead",
        backend="baseline",
        package_version="test",
        created_at="2026-01-01T00:00:00+00:00",
    )


@pytest.mark.parametrize("bad", ["../x", "/etc", "a/b", "a\\b", "", "..", ".hidden", "x..y", "a" * 201, "a\0b"])
def test_one_validator_refuses_names_that_escape(bad):
    with pytest.raises(ArtifactError):
        check_name(bad, "--round")
    with pytest.raises(ArtifactError):
        Layout(Path("/tmp/h")).report_dir(bad)


def test_safe_name_and_layout_stay_inside_the_home(tmp_path):
    assert safe_name("openai/gpt-4o") == "openai__gpt-4o" and safe_name("random:2") == "random_2"
    assert safe_name("../../etc") == "etc"  # free text is rendered, then checked
    lay = Layout.of(tmp_path / "runs")  # a runs/ directory names its workspace
    assert lay.home == tmp_path.resolve()
    assert lay.run_dir("r1", "baseline__lead") == tmp_path.resolve() / "runs" / "r1" / "baseline__lead"
    with pytest.raises(ArtifactError):
        lay.run_dir("r1", "../../outside")


def test_readers_skip_and_count_torn_non_utf8_and_invalid_lines(tmp_path):
    run = tmp_path / "runs" / "r1" / "baseline__lead"
    write_run_spec(run, _spec())
    w = RecordWriter(run)
    for i in range(3):
        w.append(_record(i))
    w.close()
    path = records_file(run, "title", "zero-shot")
    with path.open("ab") as f:
        f.write(b'{"sample_id": "\xff\xfe broken utf-8"}\n')  # not UTF-8
        f.write(b"\xc3\x28 not json either\n")
        f.write(b'{"sample_id": "missing fields"}\n')  # JSON, not a record
        f.write(_record(9).model_dump_json().encode()[:40])  # torn last line (kill -9 mid-write)
    (run / SCORES).write_bytes(b"\xff\n{torn")
    data = load_run(run)
    assert sorted(data.records) == [f"title/zero-shot/{i}" for i in range(3)]
    assert data.scores == {}
    reasons = " | ".join(data.bad_lines)
    assert reasons.count("not JSON") == 3 and "not a RunRecord" in reasons and reasons.count("torn") == 2
    # the writer cuts the torn tail before appending, so the file is whole lines again
    w = RecordWriter(run)
    w.append(_record(3))
    w.close()
    assert len(list(iter_jsonl(path, RunRecord))) == 4


def test_a_damaged_run_json_or_manifest_is_one_clear_error(tmp_path):
    run = tmp_path / "runs" / "r1" / "m"
    write_run_spec(run, _spec())
    (run / RUN_SPEC).write_text('{"round": "r1", "model": ')  # truncated
    with pytest.raises(AcademicEvalError) as err:
        load_run(run)
    msg = str(err.value)
    assert RUN_SPEC in msg and "\n" not in msg and "--run-name" in msg
    rnd = tmp_path / "rounds" / "r1"
    rnd.mkdir(parents=True)
    (rnd / "manifest.json").write_text("{not json")
    with pytest.raises(AcademicEvalError) as err:
        load_round(rnd)
    assert "manifest.json" in str(err.value) and "\n" not in str(err.value)


def test_configs_refuse_unknown_or_misspelled_options():
    with pytest.raises(ConfigError, match="prob"):
        RunConfig(model="baseline/lead", prob="title-only")
    with pytest.raises(ConfigError, match="probe"):
        RunConfig(model="baseline/lead", probe="titel-only")
    with pytest.raises(ConfigError, match="run-name"):
        RunConfig(model="baseline/lead", run_name="../escape")
    with pytest.raises(ConfigError, match="setting"):
        BuildConfig(settings=["randm:2"])
    with pytest.raises(ConfigError, match="metric"):
        ScoreConfig(metric=["rouge-l"])
    cfg = RunConfig(model="baseline/lead", rag="bm25")
    assert RunConfig.model_validate(cfg.stored()) == cfg  # stored verbatim, read back the same


def test_report_refuses_unsafe_and_unknown_round_names(tmp_path):
    home = tmp_path / "home"
    write_run_spec(home / "runs" / "r1" / "baseline__lead", _spec())
    runner = CliRunner()
    for bad in ("../x", str(tmp_path / "abs")):
        r = runner.invoke(app, ["report", "--round", bad, "--home", str(home)])
        assert r.exit_code == 2 and "not a safe directory name" in " ".join(r.output.split())
    assert not (tmp_path / "x").exists() and not (tmp_path / "abs").exists()
    r = runner.invoke(app, ["report", "--round", "nosuchround", "--home", str(home)])
    out = " ".join(r.output.split())
    assert r.exit_code == 2 and "no saved runs of round 'nosuchround'" in out and "r1" in out
    assert not (home / "reports").exists()


def test_score_records_keep_their_config(tmp_path):
    rec = ScoreRecord(
        sample_id="s", task="t", setting="z", split="test", published=date(2022, 1, 1), metric="m", config_hash="h"
    )
    rec.config = ScoreConfig(metrics=["rouge-l"]).stored()
    assert ScoreRecord.model_validate_json(rec.model_dump_json()).config["metrics"] == ["rouge-l"]


def test_each_config_is_stored_verbatim_with_what_it_produced(corpus, tmp_path):
    """run.json keeps the RunConfig, every score record the ScoreConfig, read back through the artifacts layer."""
    from academiceval.runs.runner import run_round
    from academiceval.scores.rescore import score_runs
    from academiceval.store.artifacts import read_run_spec, read_scores
    from academiceval.testing.sample_round import write_sample_round

    home = tmp_path / "home"
    write_sample_round(corpus, home / "rounds" / "2022-12-sample", max_papers=6, body_chars=2000)
    run_cfg = RunConfig(model="baseline/lead", tasks=["title"], settings=["zero-shot"], limit=2)
    summary = run_round(home, "2022-12-sample", run_cfg)
    spec = read_run_spec(summary.run_dir)
    assert spec is not None and RunConfig.model_validate(spec.config) == run_cfg
    score_cfg = ScoreConfig(metrics=["rouge-l"])
    score_runs([summary.run_dir], score_cfg)
    scores = read_scores(summary.run_dir)
    assert len(scores) == 2 and all(ScoreConfig.model_validate(s.config) == score_cfg for s in scores)


def test_artifact_names_are_readable_and_old_run_files_resume(tmp_path: Path) -> None:
    slugs = [setting_slug(s) for s in ("zero-shot", "random:1", "coauthor:2", "mixed:1+1", "ctx:32000")]
    assert slugs == ["zero-shot", "random1", "coauthor2", "mixed1-1", "ctx32K"]
    assert artifact_name("abstract", "random:1") == "abstract-random1"
    assert artifact_name("abstract", "random:1", "19K") == "abstract-random1-19K"
    new = tmp_path / "new"
    new.mkdir()
    assert records_file(new, "title", "zero-shot").name == "title-zero-shot.jsonl"
    assert records_file(new, "abstract", "random:1").name == "abstract-random1.jsonl"
    # a run written before the rename: its file keeps receiving the records of the resumed run
    old_run = tmp_path / "old"
    old_run.mkdir()
    recs = [_record(i).model_copy(update={"setting": "random:1", "sample_id": f"t/r/{i}"}) for i in range(4)]
    old = old_run / "title-random_1.jsonl"
    old.write_text("".join(r.model_dump_json() + "\n" for r in recs[:2]))
    assert records_file(old_run, "title", "random:1") == old
    w = RecordWriter(old_run)
    for r in recs[1:]:  # sample 1 retried, 2 and 3 new
        w.append(r)
    w.close()
    assert sorted(p.name for p in old_run.glob("*.jsonl")) == ["title-random_1.jsonl"]
    assert sorted(read_run_records(old_run)) == [f"t/r/{i}" for i in range(4)]
