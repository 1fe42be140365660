"""Issue 28 item 2: run.json says which tokenizer counted tokens — offline, a tiktoken that cannot load is an error
when asked for by name, and a recorded warning when only implied by the model (never a silent bert-base-uncased)."""

from __future__ import annotations

import json

import pytest

from academiceval.models import tokenize
from academiceval.models.tokenize import TokenizerError
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round


@pytest.fixture()
def offline_tiktoken(tmp_path, monkeypatch):
    """tiktoken as on a machine without internet and without its cached encoding files (the real code path:
    tiktoken tries to download and the request fails)."""
    tiktoken = pytest.importorskip("tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-tiktoken-cache"))

    def offline(name):
        raise ConnectionError(f"no network to fetch {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    monkeypatch.setattr(tiktoken, "encoding_for_model", offline)
    tokenize._load_cached.cache_clear()
    yield
    tokenize._load_cached.cache_clear()


def test_a_named_tokenizer_that_cannot_load_stops_the_run_before_any_request(
    sample_round, fake_server, tmp_path, offline_tiktoken
):
    srv = fake_server(models=("gpt-4o-mini",))
    cfg = RunConfig(
        model="openai/gpt-4o-mini", base_url=srv.url, tokenizer="tiktoken:o200k_base", context_length=4000
    )
    with pytest.raises(TokenizerError, match="bert-base-uncased"):  # the hint names the honest way out
        run_round(tmp_path / "ws", sample_round, cfg)
    assert srv.stats.total == 0 and not (tmp_path / "ws" / "runs").exists()


def test_an_implied_tokenizer_falls_back_and_run_json_says_so(sample_round, fake_server, tmp_path, offline_tiktoken):
    srv = fake_server(models=("gpt-4o-mini",))
    cfg = RunConfig(model="openai/gpt-4o-mini", base_url=srv.url, context_length=4000, tasks=["title"])
    with pytest.warns(UserWarning, match="counting with bert-base-uncased"):
        s = run_round(tmp_path / "ws", sample_round, cfg)
    spec = json.loads((s.run_dir / "run.json").read_text())
    assert spec["tokenizer"] is None and spec["tokenizer_used"] == "bert-base-uncased"
    assert len(spec["warnings"]) == 1 and "tiktoken:gpt-4o-mini" in spec["warnings"][0]
    assert s.warnings == spec["warnings"] and srv.stats.total > 0


def test_a_run_that_counts_nothing_records_no_tokenizer(sample_round, fake_server, tmp_path):
    srv = fake_server()
    s = run_round(tmp_path / "ws", sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    spec = json.loads((s.run_dir / "run.json").read_text())
    assert spec["tokenizer_used"] is None and spec["warnings"] == []
