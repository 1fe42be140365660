"""Issue 28 item 8: `--rag dense` says how many chunks it will embed and how long that takes (from a rate it
measures) before the embedding pass, shows the pass's progress, and then asks the samples — on a real round."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.models.prepare import retrieval_chunks
from academiceval.models.rag import RagConfig, retrievers
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.store.artifacts import load_round

pytestmark = pytest.mark.ml


def test_dense_run_estimates_then_embeds_with_progress(sample_round: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(retrievers, "_cache", {})  # a fresh retriever: nothing embedded yet, as in a new process
    events: list[tuple] = []
    config = RunConfig(model="baseline/lead", rag=RagConfig(retriever="dense", top_k=4), splits=["test"])
    summary = run_round(
        tmp_path / "ws",
        sample_round,
        config,
        progress=lambda done, total: events.append(("samples", done, total)),
        notice=lambda line: events.append(("notice", line)),
        stage_progress=lambda what, done, total: events.append(("stage", what, done, total)),
    )
    notices = [e[1] for e in events if e[0] == "notice"]
    assert len(notices) == 2, notices
    plan, done = notices

    # the chunks it counts are those the prompt preparation ranks: every distinct chunk of the samples asked,
    # except the first sample's (embedded when the runner checks the options on it, before anything is sent)
    samples = [s for s in load_round(sample_round).distinct_samples() if s.split == "test"]
    rag = config.rag
    first = {t for t, _ in retrieval_chunks(samples[0], rag, model=config.model)}
    chunks: dict[str, int] = {}
    for s in samples:
        for text, n in retrieval_chunks(s, rag, model=config.model):
            chunks.setdefault(text, n)
    want = {t: n for t, n in chunks.items() if t not in first}
    plan_re = (
        r"dense retrieval: ([\d,]+) chunks \(([\d,]+) tokens\) of (\d+) samples to embed with (\S+): about [\d.]+ "
        r"(?:s|min|h)(?: \d+ s)? in all at ([\d.,]+) chunks/s \(measured on (\d+) of them\)$"
    )
    m = re.match(plan_re, plan)
    assert m, plan
    assert int(m[1].replace(",", "")) == len(want) and int(m[2].replace(",", "")) == sum(want.values())
    assert int(m[3]) == len(samples) and m[4].endswith("all-MiniLM-L6-v2")

    # the estimate comes from the measured probe, not a constant; the run records it and what it really took
    emb = summary.embedding
    assert emb is not None and emb["chunks"] == len(want) and emb["ahead"] == len(want)
    assert 0 < emb["probe_chunks"] <= 32 and emb["probe_s"] > 0
    assert emb["chunks_per_s"] == pytest.approx(emb["probe_chunks"] / emb["probe_s"], rel=1e-3)
    rest = (emb["ahead"] - emb["probe_chunks"]) / emb["chunks_per_s"]
    assert emb["estimated_s"] == pytest.approx(emb["probe_s"] + rest, rel=1e-3)
    assert emb["elapsed_s"] >= emb["probe_s"] and done.startswith(f"dense retrieval: embedded {len(want):,} chunks")

    # order: estimate → the pass's progress up to all chunks → its end → only then samples finish
    def kind(e: tuple) -> str:
        if e[0] == "notice":
            return "plan" if e[1] == plan else "done"
        return "cutting" if e[0] == "stage" and e[1].startswith("cutting ") else e[0]

    order = [kind(e) for e in events]
    cutting = [e for e in events if e[0] == "stage" and e[1].startswith("cutting ")]
    assert cutting and cutting[-1][2:] == (len(samples), len(samples))  # a line while the inputs are cut
    stage = [e for e in events if e[0] == "stage" and not e[1].startswith("cutting ")]
    assert stage[-1][2] == stage[-1][3] == len(want) and stage[0][1].startswith(f"embedding {len(want):,} chunks")
    assert [d for _, _, d, _ in stage] == sorted(d for _, _, d, _ in stage)
    first_sample_done = next(i for i, e in enumerate(events) if e[0] == "samples" and e[1] > 0)
    assert order.index("cutting") < order.index("plan") < order.index("stage") < order.index("done")
    assert order.index("done") < first_sample_done
    assert summary.total("done") == len(samples)

    # the same run again resumes: nothing left to ask, nothing to embed, no estimate
    events.clear()
    again = run_round(tmp_path / "ws", sample_round, config, notice=lambda line: events.append(("notice", line)))
    assert again.total("already_done") == len(samples) and not events and again.embedding is None


def test_run_cli_prints_the_estimate(sample_round: Path, tmp_path: Path) -> None:
    args = ["run", str(sample_round), "--model", "baseline/lead", "--rag", "dense", "--top-k", "4"]
    res = CliRunner().invoke(app, [*args, "--home", str(tmp_path / "ws"), "--json"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert re.search(r"dense retrieval: [\d,]+ chunks \([\d,]+ tokens\) of \d+ samples to embed", res.stderr)
    assert "dense retrieval: embedded" in res.stderr
    import json

    assert json.loads(res.stdout)["embedding"]["chunks"] > 0
