"""Issue 28 item 8: what can be run and scored is findable from the command line — every baseline in `run --help`
and `academiceval models`, every metric in `score --help` and `academiceval metrics` — checked against the
registries themselves, so a new baseline or metric that is not listed fails here."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.models.baselines import BASELINE_SUMMARIES, BASELINES
from academiceval.scores import registry


def _help(*args: str) -> str:
    res = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "400"}, terminal_width=400)
    assert res.exit_code == 0, res.output
    return re.sub(r"[\s│]+", " ", res.output)  # the help box wraps: compare with whitespace folded


def test_every_baseline_is_named_in_run_help_and_listed_with_a_summary():
    assert set(BASELINE_SUMMARIES) == set(BASELINES)
    text = _help("run")
    missing = [b for b in BASELINES if f"baseline/{b}" not in text]
    assert not missing, f"run --help does not name {missing}"
    assert "fake_server" in text  # the local OpenAI-compatible test server is mentioned where users look
    res = CliRunner().invoke(app, ["models", "--json"])
    rows = {r["model"]: r["what"] for r in json.loads(res.output)}
    for b in BASELINES:
        assert rows[f"baseline/{b}"] == BASELINE_SUMMARIES[b]
    assert "openai/<model>" in rows and "hf/<repo-or-path>" in rows


def test_every_metric_is_named_in_score_help_and_listed_with_its_options():
    names = registry.names()
    assert {"citation-precision", "citation-recall", "citation-unlisted", "accuracy", "leval"} <= set(names)
    text = _help("score")
    missing = [m for m in names if m not in text]
    assert not missing, f"score --help does not name {missing}"
    res = CliRunner().invoke(app, ["metrics", "--json"])
    rows = {r["metric"]: r for r in json.loads(res.output)}
    assert list(rows) == names and all(r["summary"] for r in rows.values())
    assert "layer" in rows["bertscore"]["options"] and "parser" in rows["accuracy"]["options"]


def test_listings_keep_brackets_literal():
    """A summary such as "[n] markers" is text, not rich markup."""
    res = CliRunner().invoke(app, ["metrics"], terminal_width=200)
    assert "<answer>" in res.output and res.exit_code == 0
