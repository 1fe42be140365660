"""`academiceval run` through typer (in-process), against the local server."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.cli.run import parse_generation_options
from academiceval.errors import ConfigError
from academiceval.runs.config import RunConfig
from academiceval.store.artifacts import read_run_records

runner = CliRunner()


def invoke(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})


def test_run_then_resume_prints_summary(sample_round, fake_server, tmp_path):
    srv = fake_server()
    home = str(tmp_path / "ws")
    res = invoke(
        "run",
        str(sample_round),
        "--model",
        "openai/fake-model",
        "--base-url",
        srv.url,
        "--home",
        home,
        "--task",
        "title",
        "-T",
        "temperature=0.2",
        "-T",
        "seed=7",
        "--limit",
        "5",
    )
    assert res.exit_code == 0, res.output
    assert "title" in res.output and "abstract" not in res.output and "resumed" in res.output
    recs = read_run_records(tmp_path / "ws" / "runs" / "2022-12-sample" / "openai__fake-model")
    assert len(recs) == 10 and {r.task for r in recs.values()} == {"title"}
    sent = srv.stats.total
    # a round *name* resolves inside the workspace
    (tmp_path / "ws" / "rounds").mkdir(parents=True, exist_ok=True)
    sample_round.rename(tmp_path / "ws" / "rounds" / sample_round.name)
    res = invoke(
        "run",
        sample_round.name,
        "--model",
        "openai/fake-model",
        "--base-url",
        srv.url,
        "--home",
        home,
        "--task",
        "title",
        "-T",
        "temperature=0.2",
        "-T",
        "seed=7",
        "--limit",
        "5",
    )
    assert res.exit_code == 0, res.output
    assert srv.stats.total == sent
    assert "│ 5        │ 5       │ 0" in res.output.replace("┃", "│")  # selected 5, resumed 5, done 0


def test_cli_errors_are_actionable(sample_round, fake_server, tmp_path):
    srv = fake_server()
    home = str(tmp_path / "ws")
    cases = [
        (["--model", "gpt-4o"], "provider/model"),
        (["--model", "openai/nope", "--base-url", srv.url], "not served"),
        (
            ["--model", "openai/gpt-4o", "--base-url", "https://api.example.com/v1", "--api-key-env", "NO_KEY_HERE"],
            "NO_KEY_HERE",
        ),
        (["--model", "openai/fake-model", "--base-url", srv.url, "-T", "temperature"], "key=value"),
        (["--model", "openai/fake-model", "--base-url", srv.url, "--task", "introduction"], "no samples"),
        (["--model", "openai/fake-model", "--base-url", srv.url, "--probe", "everything"], "probe"),
        (["--model", "openai/fake-model", "--base-url", srv.url, "--rag", "magic"], "unknown retriever"),
    ]
    for extra, needle in cases:
        res = invoke("run", str(sample_round), "--home", home, *extra)
        assert res.exit_code == 2, (extra, res.output)
        assert needle in res.output, (extra, res.output)
    res = invoke("run", "no-such-round", "--home", home, "--model", "openai/fake-model", "--base-url", srv.url)
    assert res.exit_code == 2 and "not found" in res.output
    assert srv.stats.total == 0


def test_count_tokens_is_a_dry_run(sample_round, fake_server, tmp_path):
    srv = fake_server()
    res = invoke(
        "run",
        str(sample_round),
        "--model",
        "openai/fake-model",
        "--base-url",
        srv.url,
        "--home",
        str(tmp_path / "ws"),
        "--count-tokens",
        "--context-length",
        "1500",
        "--tokenizer",
        "bert-base-uncased",
        "--task",
        "title",
        "--setting",
        "random:1",
        "--limit",
        "4",
    )
    assert res.exit_code == 0, res.output
    assert "would cut" in res.output and "title" in res.output
    assert srv.stats.total == 0 and not list((tmp_path / "ws").rglob("*.jsonl"))


def test_option_parsers():
    assert parse_generation_options(["temperature=0.7", "max_tokens=64", 'stop=["\\n"]', "name=abc"]) == {
        "temperature": 0.7,
        "max_tokens": 64,
        "stop": ["\n"],
        "name": "abc",
    }
    with pytest.raises(ConfigError):
        parse_generation_options(["=3"])

    def parse_rag(spec, top_k, chunk_size, chunk_overlap):  # --rag and its options, through RunConfig's one parser
        if spec is None:
            return RunConfig(model="baseline/lead").rag_settings()
        rag = {"retriever": spec, "top_k": top_k, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
        return RunConfig(model="baseline/lead", rag=rag).rag_settings()

    assert parse_rag("dense:/models/contriever", 12, 512, 64) == {
        "retriever": "dense",
        "top_k": 12,
        "chunk_size": 512,
        "chunk_overlap": 64,
        "model": "/models/contriever",
    }
    assert parse_rag(None, 12, 512, 64) is None
    for bad in (("bm25:x", 12, 512, 64), ("bm25", 0, 512, 64), ("tfidf", 12, 512, 512)):
        with pytest.raises(ConfigError):
            parse_rag(*bad)
    with pytest.raises(ConfigError, match="prob"):  # a misspelled option is an error, never dropped
        RunConfig(model="baseline/lead", prob="title-only")
