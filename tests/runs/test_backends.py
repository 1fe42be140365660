"""The backend factory and the runner with the other backends: baselines, retrieval-augmented prompts."""

from __future__ import annotations

import pytest

from academiceval.errors import ConfigError
from academiceval.models.registry import load_backend
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.store.artifacts import load_round, read_run_records


def test_factory_builds_each_provider(tmp_path):
    b = load_backend("baseline/lead", timeout=3.0)  # runner-wide options a backend does not take are dropped
    assert b.name == "baseline" and b.cache_identity()["model"] == "lead"
    with pytest.raises(ConfigError, match="unknown baseline"):
        load_backend("baseline/oracle")
    with pytest.raises(ConfigError, match="not a local directory"):
        load_backend("hf/" + str(tmp_path / "missing-checkpoint"))


@pytest.mark.parametrize("name", ["lead", "demo-copy", "extractive"])
def test_baselines_run_through_the_runner(sample_round, tmp_path, name):
    ws = tmp_path / "ws"
    s = run_round(ws, sample_round, RunConfig(model=f"baseline/{name}", limit=4))
    recs = read_run_records(s.run_dir)
    assert len(recs) == 16 and s.total("errors") == 0
    samples = {x.sample_id: x for x in load_round(sample_round).distinct_samples()}
    for r in recs.values():
        assert r.output_raw.strip() and r.output
        if name == "lead" and r.task == "abstract":  # the opening of the body, never the label
            assert r.output_raw.split()[:5] == samples[r.sample_id].fields["body"].split()[:5]
    again = run_round(ws, sample_round, RunConfig(model=f"baseline/{name}", limit=4))
    assert again.total("already_done") == 16 and again.finished_now == 0


@pytest.mark.parametrize("retriever", ["bm25", "tfidf"])  # dense: tests/models (loading torch costs ~30 s here)
def test_rag_runs_record_what_was_retrieved(sample_round, fake_server, tmp_path, retriever):
    srv = fake_server()
    rag = {"retriever": retriever, "top_k": 3, "chunk_size": 128, "chunk_overlap": 16}
    s = run_round(
        tmp_path / "ws",
        sample_round,
        RunConfig(
            model="openai/fake-model", base_url=srv.url, rag=rag, tasks=["abstract"], settings=["zero-shot"], limit=3
        ),
    )
    assert s.run_dir.name == f"openai__fake-model+rag-{retriever}-k3"
    recs = read_run_records(s.run_dir)
    assert len(recs) == 3 and s.total("errors") == 0
    for r in recs.values():
        got = r.prompt_info["retrieved"]
        assert len(got) == 3 and [g["rank"] for g in got] == sorted(g["rank"] for g in got)
        assert r.input_tokens > 0
    # a plain run on the same samples sends different (longer) prompts
    plain = run_round(
        tmp_path / "ws",
        sample_round,
        RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["abstract"], settings=["zero-shot"], limit=3),
    )
    assert {r.prompt_sha256 for r in recs.values()}.isdisjoint(
        r.prompt_sha256 for r in read_run_records(plain.run_dir).values()
    )


def test_baseline_answers_are_keyed_by_sample_not_only_prompt(sample_round, tmp_path):
    """Truncated to the same prompt, a random:1 sample and its zero-shot twin still differ for demo-copy
    (it reads the sample's demos): the cache must not hand one's answer to the other."""
    ws = tmp_path / "ws"
    kw = dict(context_length=700, tokenizer="bert-base-uncased", tasks=["abstract"], limit=4)
    s = run_round(ws, sample_round, RunConfig(model="baseline/demo-copy", **kw))
    recs = read_run_records(s.run_dir)
    same_prompt: dict[str, list] = {}
    for r in recs.values():
        same_prompt.setdefault(r.prompt_sha256, []).append(r)
    pairs = [g for g in same_prompt.values() if len(g) == 2]
    assert pairs  # truncation dropped the demo, so the two prompts are equal...
    assert any(a.output_raw != b.output_raw for a, b in pairs)  # ...but demo-copy answers from the sample
    assert s.total("cached") == 0


def test_rag_baseline_reads_the_retrieved_chunks_not_the_whole_paper(sample_round, tmp_path):
    """Under --rag a baseline's available text is what retrieval kept: lead then starts with the top chunk,
    and its answers differ from the plain lead baseline's (the original code's RAG ignored the query)."""
    ws = tmp_path / "ws"
    kw = dict(tasks=["abstract"], settings=["zero-shot"], limit=3)
    rag = {"retriever": "bm25", "top_k": 3, "chunk_size": 96, "chunk_overlap": 0}
    with_rag = read_run_records(run_round(ws, sample_round, RunConfig(model="baseline/lead", rag=rag, **kw)).run_dir)
    plain = read_run_records(run_round(ws, sample_round, RunConfig(model="baseline/lead", **kw)).run_dir)
    assert len(with_rag) == len(plain) == 3
    samples = {x.sample_id: x for x in load_round(sample_round).distinct_samples()}
    for sid, rec in with_rag.items():
        assert rec.error is None and rec.prompt_info["retrieved"]
        assert rec.output_raw != plain[sid].output_raw
        top = [
            g for g in rec.prompt_info["retrieved"] if g["rank"] == min(x["rank"] for x in rec.prompt_info["retrieved"])
        ]
        assert top and top[0]["source"] == "body"  # zero-shot: every chunk comes from the target body
        assert rec.output_raw.split()[0] in samples[sid].fields["body"]


def test_a_sample_whose_prompt_cannot_be_prepared_is_recorded_and_the_run_goes_on(sample_round, tmp_path, monkeypatch):
    from academiceval.runs import worker

    real = worker.SampleWorker.prepare_now

    def flaky(self, sample, max_tokens):
        if sample.task == "abstract":
            raise KeyError("a template asked for a field this sample lacks")
        return real(self, sample, max_tokens)

    monkeypatch.setattr(worker.SampleWorker, "prepare_now", flaky)
    s = run_round(
        tmp_path / "ws",
        sample_round,
        RunConfig(model="baseline/lead", tasks=["abstract", "title"], settings=["zero-shot"], limit=2),
    )
    recs = read_run_records(s.run_dir)  # the failed records are readable (they carry an empty prompt hash)
    failed = [r for r in recs.values() if r.task == "abstract"]
    ok = [r for r in recs.values() if r.task == "title"]
    assert failed and all(r.error_code == "prepare_failed" and r.retryable and r.prompt_sha256 == "" for r in failed)
    assert all("KeyError" in (r.error or "") for r in failed)
    assert ok and all(r.error is None and r.output for r in ok)
