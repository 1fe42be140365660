"""Metric options namespaced per metric (`--metric-arg bertscore.layer=9` → `{"bertscore": {"layer": 9}}`), typed
by each metric's options model, old flat options mapped onto the namespace, and no credentials stored."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.errors import ConfigError
from academiceval.scores import registry
from academiceval.scores.builtin import BertScoreMetric
from academiceval.scores.config import ScoreConfig, parse_metric_args, stored_option
from academiceval.scores.rescore import score_runs
from academiceval.scores.scorer import config_hash
from academiceval.store.artifacts import read_scores


def test_metric_args_parse_into_namespaces() -> None:
    got = parse_metric_args(["bertscore.layer=9", "judge.against=runs/r/m", "bertscore.idf=true"])
    assert got == {"bertscore": {"layer": "9", "idf": "true"}, "judge": {"against": "runs/r/m"}}
    for bad in ["layer=9", "bertscore.layer", ".layer=9", "bertscore.=9"]:
        with pytest.raises(ConfigError, match=r"METRIC\.OPTION=VALUE"):
            parse_metric_args([bad])


def test_options_are_typed_by_their_metric_and_misspellings_fail() -> None:
    config = ScoreConfig(options=parse_metric_args(["bertscore.layer=9", "bertscore.idf=true"]))
    o = registry.metric_options(config, "bertscore")
    assert (o.layer, o.idf, o.model, o.long_inputs) == (9, True, "all-MiniLM-L6-v2", "window")
    assert registry.metric_options(ScoreConfig(), "judge").against == "reference"
    with pytest.raises(ConfigError, match=r"bertscore.layr: Extra inputs are not permitted") as e:
        registry.check_options(ScoreConfig(options={"bertscore": {"layr": 9}}))
    assert "bertscore.layer" in str(e.value)  # the hint lists what the metric takes
    with pytest.raises(ConfigError, match=r"accuracy\.parser"):
        registry.check_options(ScoreConfig(options={"accuracy": {"parser": "loose"}}))
    with pytest.raises(ConfigError, match="takes no options"):
        registry.check_options(ScoreConfig(options={"rouge-l": {"stemmer": "false"}}))
    with pytest.raises(ConfigError, match="unknown metric 'bleu'"):
        registry.check_options(ScoreConfig(options={"bleu": {"n": 4}}))


def test_old_flat_options_map_onto_the_namespace() -> None:
    old = ScoreConfig(layer=3, idf=True, bertscore_model="m", long_inputs="truncate", mcq_parser="lenient",
                      leval_protocol="strict", against="runs/x/y", baseline=None)  # fmt: skip
    assert old.options == {
        "bertscore": {"layer": 3, "idf": True, "model": "m", "long_inputs": "truncate"},
        "accuracy": {"parser": "lenient"},
        "leval": {"protocol": "strict"},
        "judge": {"against": "runs/x/y"},
    }
    # an explicit namespaced value wins over a flat one
    assert ScoreConfig(layer=3, options={"bertscore": {"layer": 5}}).options == {"bertscore": {"layer": 5}}
    # what records stored before (flat) and after (namespaced) is read the same way
    assert stored_option({"against": "runs/a"}, "judge", "against") == "runs/a"
    assert stored_option(old.stored(), "judge", "against") == "runs/x/y"
    assert stored_option({}, "judge", "against", "reference") == "reference"


def test_no_credentials_in_the_stored_config() -> None:
    stored = ScoreConfig(judge="openai/j", judge_base_url="http://user:SECRET@127.0.0.1:8000/v1?api_key=SECRET")
    assert "SECRET" not in json.dumps(stored.stored())
    assert stored.stored()["judge_base_url"] == "http://***@127.0.0.1:8000/v1?api_key=***"  # store.secrets


def test_cli_metric_arg_and_old_flag(run_home) -> None:
    home, run_dir = run_home
    bad = CliRunner().invoke(app, ["score", str(run_dir), "--metrics", "rouge-l", "--metric-arg", "accuracy.parsr=x"])
    assert bad.exit_code == 2 and "accuracy.parsr" in bad.output and "Traceback" not in bad.output
    assert not (run_dir / "scores.jsonl").exists()  # refused before any run was read
    res = score_runs([run_dir], ScoreConfig(metrics=["rouge-l"], mcq_parser="lenient"), home=home)[0]
    assert res.written == {"rouge-l": 12}
    assert {stored_option(r.config, "accuracy", "parser") for r in read_scores(run_dir)} == {"lenient"}
    args = ["score", str(run_dir), "--metrics", "rouge-l", "--metric-arg", "judge.against=reference"]
    ok = CliRunner().invoke(app, [*args, "--home", str(home)])
    assert ok.exit_code == 0, ok.output
    assert "0 new score records, 12 already scored" in " ".join(ok.output.split())


def test_window_stride_option_is_its_own_metric_and_config() -> None:
    """`--metric-arg bertscore.window_stride=N` (issue 27: a cheaper window geometry) reaches the scorer, and its
    records never mix with the default geometry's: another metric name, config hash and embedding-cache key."""
    default = BertScoreMetric(registry.MetricOptions(config=ScoreConfig()))
    config = ScoreConfig(options=parse_metric_args(["bertscore.window_stride=446"]))
    cheaper = BertScoreMetric(registry.MetricOptions(config=config))
    assert default.metric_name == "bertscore-all-MiniLM-L6-v2-L6-window"  # unchanged: old records stay valid
    assert cheaper.metric_name == "bertscore-all-MiniLM-L6-v2-L6-window-stride446"
    assert default.config()["window_stride"] is None and cheaper.config()["window_stride"] == 446
    assert config_hash(default.config()) != config_hash(cheaper.config())
    assert default.bert.embedding_identity() != cheaper.bert.embedding_identity()
    with pytest.raises(ConfigError, match="window_stride"):
        registry.check_options(ScoreConfig(options={"bertscore": {"window_stride": 0}}))
