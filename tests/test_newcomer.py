"""Issue 14's newcomer list: each small thing a new user tripped over, with its regression test."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app, command
from academiceval.store.artifacts import Layout, load_run
from academiceval.testing.sample_round import write_sample_round


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """The click command `academiceval` runs (readable placeholders) on a wide console: tables not wrapped."""
    from academiceval.cli import common

    monkeypatch.setattr("typer.testing._get_command", lambda _app: command())
    monkeypatch.setattr(common.console, "width", 220)


def _help(*args: str) -> str:
    res = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "220"})
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("cmd", ["run", "score", "report", "demo", "ingest", "build", "collect", "update", "release"])
def test_help_placeholders_are_readable(cmd: str) -> None:
    text = _help(cmd)
    for ugly in ("<list[", "<int range>", "<bool>", "<str>", "<Path>", "<int>", "<float>"):
        assert ugly not in text, (cmd, ugly)


def test_run_help_lists_the_baselines_and_what_each_does() -> None:
    text = " ".join(_help("run").replace("│", " ").split())  # the help box's borders split wrapped lines
    for name in ("baseline/lead", "baseline/extractive", "baseline/demo-copy"):
        assert name in text
    assert "BM25" in text and "opening of the paper" in text


def test_metric_options_are_consistent() -> None:
    """score --metrics a,b and demo --metrics a,b compute metrics; report --metric/--rank-by picks one to rank by;
    every one of them names the rule and takes the other spelling (issue 28 item 8)."""
    from academiceval.cli.common import METRIC_SPELLING

    rule = " ".join(METRIC_SPELLING.split())
    for cmd in ("score", "demo", "report", "compare", "export"):
        text = " ".join(_help(cmd).replace("│", " ").split())
        assert "--metrics" in text and "--metric" in text, cmd
        assert rule in text, cmd  # the rule is said where the option is
    assert "--rank-by" in _help("report")


def test_metric_names_split_commas_and_repeats() -> None:
    from academiceval.cli.common import metric_names

    assert metric_names(None) is None and metric_names([]) is None and metric_names([" , "]) is None
    assert metric_names(["rouge-l,bertscore", "rouge-1", "rouge-l"]) == ["rouge-l", "bertscore", "rouge-1"]
    assert metric_names("rouge-l, rouge-2") == ["rouge-l", "rouge-2"]


def test_key_value_tables_have_no_blank_header_row() -> None:
    from academiceval.cli.common import summary_table

    assert summary_table("t", ["", ""], [("a", 1)]).show_header is False
    assert summary_table("t", ["config", "n"], [("a", 1)]).show_header is True


def test_model_colours_are_stable_across_reports() -> None:
    from academiceval.report.plots import colors_for

    one = colors_for(["baseline/lead", "openai/gpt-4o"])
    two = colors_for(["baseline/extractive", "baseline/lead", "hf/x", "openai/gpt-4o", "openai/o3"])
    assert one["baseline/lead"] == two["baseline/lead"]
    assert len(set(two.values())) == len(two)  # still one colour per model within a report


def test_low_n_cells_are_flagged_without_an_interval() -> None:
    from academiceval.report.leaderboard import fmt
    from academiceval.scores.models import Estimate

    tiny = fmt(Estimate(n=1, mean=0.169, ci_low=0.169, ci_high=0.169))
    assert "low n" in tiny and "[" not in tiny
    assert fmt(Estimate(n=40, mean=0.2, ci_low=0.18, ci_high=0.22)) == "0.200 [0.180, 0.220]"


def test_skewed_splits_are_explained() -> None:
    from academiceval.rounds.stats import split_notes
    from academiceval.store.models import ConfigInfo, RoundManifest, SplitWindows

    m = RoundManifest(
        round="r",
        created_at="",
        package_version="",
        seed=0,
        windows=SplitWindows(
            train_until=date(2022, 12, 21),
            val_from=date(2022, 12, 22),
            val_until=date(2022, 12, 22),
            test_from=date(2023, 2, 27),
            test_until=date(2025, 1, 22),
        ),
        configs={
            "title-zero-shot-14K": ConfigInfo(
                task="title",
                setting="zero-shot",
                setting_name="title-zero-shot-14K",
                counts={"train": 35, "val": 38, "test": 7},
            ),
        },
    )
    [val, test] = split_notes(m)
    assert "val window is 1 day (2022-12-22…2022-12-22) yet holds 48%" in val
    assert "only 7 samples" in test


def test_demo_moves_an_earlier_report_aside(tmp_path: Path) -> None:
    from academiceval.demo import keep_earlier_report

    out = tmp_path / "reports" / "demo"
    assert keep_earlier_report(out) is None
    out.mkdir(parents=True)
    (out / "my-notes.md").write_text("mine")
    moved = keep_earlier_report(out)
    assert moved is not None and (moved / "my-notes.md").read_text() == "mine" and not out.exists()
    # the demo's own earlier report (its marker lists exactly the files there) is replaced, not piled up
    from academiceval.demo import DEMO_MARKER

    out.mkdir()
    (out / "index.html").write_text("demo")
    (out / DEMO_MARKER).write_text("index.html\n")
    assert keep_earlier_report(out) is None
    (out / "mine.txt").write_text("user")  # a file the user added: moved aside again
    assert keep_earlier_report(out) is not None


@pytest.fixture(scope="module")
def home(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    h = tmp_path_factory.mktemp("newcomer-ws")
    write_sample_round(
        corpus, Layout.of(h).round_dir("demo"), name="demo", max_papers=6, body_chars=3000, settings=("zero-shot",)
    )
    return h


def test_probe_changes_baselines_inputs_and_not_applicable_has_its_own_code(home: Path) -> None:
    runner = CliRunner()
    for extra in ([], ["--probe", "title-only"]):
        res = runner.invoke(app, ["run", "demo", "--model", "baseline/lead", "--home", str(home), *extra])
        assert res.exit_code == 0, res.output
    assert "skipped: not applicable 6" in res.output and "errors:" not in res.output
    plain, probed = (load_run(d) for d in sorted((home / "runs" / "demo").iterdir()))
    if plain.spec.probe:
        plain, probed = probed, plain
    assert probed.spec.probe == "title-only"
    abstracts = [k for k in plain.records if k.startswith("abstract/")]
    # lead on the abstract task reads the body; under title-only it only has the title
    assert all(probed.records[k].output != plain.records[k].output for k in abstracts)
    titles = [r for k, r in probed.records.items() if k.startswith("title/")]
    assert titles and all(r.skipped and r.error_code == "not_applicable" for r in titles)
    # baselines say how much text they read (BERT WordPiece), not 0
    assert all(r.input_tokens > 0 for r in plain.records.values())

    # score's table names the variant: the two baseline/lead runs are told apart
    res = runner.invoke(app, ["score", str(plain.path), str(probed.path), "--metrics", "rouge-l"])
    assert res.exit_code == 0, res.output
    assert "baseline/lead [probe=title-only]" in res.output, res.output
    assert re.search(r"baseline/lead\s", res.output)
    assert "6 with errors" not in res.output  # the not-applicable title samples are not errors


def test_pyproject_declares_spdx_licence_and_the_inspect_entry_point() -> None:
    """`project.license` as a table made setuptools print a deprecation warning on every install."""
    import tomllib

    meta = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["license"] == "Apache-2.0"
    assert meta["project"]["entry-points"]["inspect_ai"]["academiceval"].endswith("integrations.inspect._registry")
    assert "inspect" in meta["project"]["optional-dependencies"]["all"][0]


def test_either_metric_spelling_does_the_same_on_a_real_run(home: Path) -> None:
    """`score --metric rouge-1` computes what `score --metrics rouge-1` would (the second call has nothing left to
    do), `compare --metrics` filters like `compare --metric`, `report --metrics a,b` is refused with a hint."""
    runner = CliRunner()
    runs = []
    for spec in ("baseline/lead", "baseline/extractive"):
        res = runner.invoke(app, ["run", "demo", "--model", spec, "--home", str(home)])
        assert res.exit_code == 0, res.output
        runs.append(f"demo/{spec.replace('/', '__')}")
    res = runner.invoke(app, ["score", *runs, "--metric", "rouge-1", "--metric", "rouge-2", "--home", str(home)])
    assert res.exit_code == 0, res.output
    lead = load_run(Layout.of(home).find_run(runs[0]))
    assert {m for (_, m, _) in lead.scores} >= {"rouge-1", "rouge-2"}
    n_scores = len(lead.scores)
    res = runner.invoke(app, ["score", *runs, "--metrics", "rouge-1,rouge-2", "--json", "--home", str(home)])
    assert res.exit_code == 0, res.output
    import json

    assert all(not any(r["written"].values()) for r in json.loads(res.stdout))  # the same metrics: all done already
    assert len(load_run(lead.path).scores) == n_scores
    shown = {}
    for flag in ("--metric", "--metrics"):
        res = runner.invoke(app, ["compare", *runs, flag, "rouge-2", "--json", "--home", str(home)])
        assert res.exit_code == 0, res.output
        shown[flag] = json.loads(res.stdout)
    assert shown["--metric"] == shown["--metrics"] and {d["metric"] for d in shown["--metric"]} == {"rouge-2"}
    res = runner.invoke(app, ["report", "--round", "demo", "--metrics", "rouge-1,rouge-2", "--home", str(home)])
    assert res.exit_code != 0 and "ranks by one metric" in res.output
