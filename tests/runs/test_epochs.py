"""Epochs (`run --epochs N`): every repeat goes through the one run path (cache, resume, records, lock), epoch 1
stays what a run without epochs writes, and presets fill only what the user did not give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from academiceval.errors import ConfigError
from academiceval.models.base import GenerationOptions
from academiceval.models.cache import ResponseCache, cache_key
from academiceval.runs.config import RunConfig, epoch_options
from academiceval.runs.runner import run_dir_name, run_round
from academiceval.store.artifacts import load_run, read_epoch_records, read_run_records


def _lines(run_dir: Path) -> list[dict]:
    return [json.loads(x) for p in sorted(run_dir.glob("*.jsonl")) if p.name != "scores.jsonl" for x in p.open()]


def test_three_epochs_three_requests_per_sample_then_resume_asks_nothing(sample_round, fake_server, tmp_path):
    srv = fake_server()
    ws = tmp_path / "ws"
    config = RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["title"], epochs=3)
    first = run_round(ws, sample_round, config)
    n = first.total("selected") // 3
    assert n > 0 and first.total("done") == 3 * n and first.epochs == 3
    # one request per (prompt, seed): epoch 1 sends no seed (as a run without epochs), epochs 2 and 3 seeds 1, 2
    # (a random:1 sample that drew no demo renders its zero-shot twin's prompt: one request serves both)
    sent = srv.stats.total
    assert sent == 3 * len(srv.stats.by_prompt) and set(srv.stats.by_prompt.values()) == {3} and sent <= 3 * n
    assert sorted({seed for _, seed in srv.stats.by_prompt_seed}, key=str) == [1, 2, None]
    recs = read_epoch_records(first.run_dir)
    assert len(recs) == 3 * n and {e for _, e in recs} == {1, 2, 3}
    assert all(r.epoch == e for (_, e), r in recs.items())
    # epoch 1 lines carry no epoch field (byte-compatible with runs written before epochs); the others do
    assert sorted(line.get("epoch", 1) for line in _lines(first.run_dir)) == sorted([1, 2, 3] * n)
    assert all("epoch" not in line for line in _lines(first.run_dir) if line.get("epoch", 1) == 1)
    # the same sample's epochs are different answers (the fake server honours seeds, as vLLM does)
    sid = next(iter(read_run_records(first.run_dir)))
    assert len({recs[(sid, e)].output_raw for e in (1, 2, 3)}) == 3
    # three cache rows per prompt, keyed by the epoch's options (epoch 1: exactly the key without epochs)
    cache = ResponseCache.in_workspace(ws)
    assert cache.count() == sent
    ident = {"backend": "openai", "model": "fake-model", "base_url": srv.url}
    opts = GenerationOptions(max_tokens=32)
    rec1 = recs[(sid, 1)]
    assert cache.get(cache_key(ident, opts, rec1.prompt_sha256)).text == rec1.output_raw
    assert cache.get(cache_key(ident, epoch_options(opts, 3), rec1.prompt_sha256)).text == recs[(sid, 3)].output_raw
    cache.close()

    again = run_round(ws, sample_round, config)  # resume: every (sample, epoch) is finished
    assert again.total("already_done") == 3 * n and again.total("done") == 0 and srv.stats.total == sent
    (first.run_dir / "title-zero-shot.jsonl").unlink()  # records lost: the cache answers, still no request
    replay = run_round(ws, sample_round, config)
    assert replay.total("cached") == replay.total("done") > 0 and srv.stats.total == sent


def test_more_epochs_extend_a_run_and_epoch_one_is_the_plain_run(sample_round, fake_server, tmp_path):
    srv = fake_server()
    ws = tmp_path / "ws"
    one = RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["title"], settings=["zero-shot"])
    plain = run_round(ws, sample_round, one)
    n = plain.total("done")
    before = {p.name: p.read_bytes() for p in plain.run_dir.glob("*.jsonl")}
    more = run_round(ws, sample_round, one.model_copy(update={"epochs": 2}))
    assert more.run_dir == plain.run_dir == ws.resolve() / "runs" / "2022-12-sample" / "openai__fake-model"
    assert more.total("already_done") == n and more.total("done") == n and srv.stats.total == 2 * n
    after = {p.name: p.read_bytes() for p in plain.run_dir.glob("*.jsonl")}
    assert all(after[name].startswith(data) for name, data in before.items())  # epoch 1 untouched, epoch 2 appended
    run = load_run(plain.run_dir)
    assert run.epochs == 2 and len(run.records) == n and len(run.epoch_records) == 2 * n
    assert all(r.epoch == 1 for r in run.records.values())


def test_failed_epochs_are_asked_again_alone(sample_round, fake_server, tmp_path):
    srv = fake_server(fail_all=503)
    ws = tmp_path / "ws"
    config = RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["title"], settings=["zero-shot"], epochs=2)
    from academiceval.models.retry import RetryPolicy

    fast = RetryPolicy(max_attempts=1)
    failed = run_round(ws, sample_round, config, retry_policy=fast)
    n = failed.total("selected")
    assert failed.failures() == {"server_error": n} and failed.incomplete() is not None
    assert "answers missing" in str(failed.incomplete())
    srv.server.config.fail_all = None  # the outage ends: a rerun asks exactly the failed (sample, epoch) pairs
    fixed = run_round(ws, sample_round, config, retry_policy=fast)
    assert fixed.total("done") == n and fixed.failures() == {} and fixed.incomplete() is None
    assert all(r.error is None for r in read_epoch_records(failed.run_dir).values())


def test_epoch_seeds_and_presets():
    opts = GenerationOptions(temperature=0.1, max_tokens=32)
    assert epoch_options(opts, 1) is opts
    assert [epoch_options(opts, e).seed for e in (2, 3)] == [1, 2]
    assert epoch_options(opts.model_copy(update={"seed": 7}), 3).seed == 9
    c = RunConfig(model="openai/m", preset="elaipbench")
    assert (c.epochs, c.options.temperature, c.options.max_tokens, c.prompt_suffix) == (3, 0.1, 32, None)
    cot = RunConfig(model="openai/m", preset="elaipbench-cot")
    assert (cot.epochs, cot.options.max_tokens) == (3, 4096) and "step by step" in (cot.prompt_suffix or "")
    mine = RunConfig(model="openai/m", preset="elaipbench", epochs=5, options={"temperature": 0.7, "top_k": 3})
    assert (mine.epochs, mine.options.temperature, mine.options.max_tokens) == (5, 0.7, 32)
    assert mine.options.model_extra == {"top_k": 3}
    assert RunConfig(**mine.stored()) == mine  # the stored config reads back as itself
    assert run_dir_name(c, None, length_instruction=False) == "openai__m+elaipbench"
    assert run_dir_name(cot, None, length_instruction=False) == "openai__m+elaipbench-cot"
    with pytest.raises(ConfigError, match=r"unknown run preset 'elaip'.*elaipbench-cot"):
        RunConfig(model="openai/m", preset="elaip")
    with pytest.raises(ConfigError, match="--epochs 0"):
        RunConfig(model="openai/m", epochs=0)


def test_prompt_suffix_is_sent_and_kept_inside_the_budget(sample_round, fake_server, tmp_path):
    srv = fake_server()
    ws = tmp_path / "ws"
    suffix = "\nThink step by step before giving the final answer."
    base = dict(model="openai/fake-model", base_url=srv.url, tasks=["abstract"], settings=["zero-shot"], limit=3)
    base["tokenizer"] = "bert-base-uncased"
    plain = run_round(ws, sample_round, RunConfig(**base, context_length=1200))
    cot = run_round(ws, sample_round, RunConfig(**base, context_length=1200, prompt_suffix=suffix))
    assert cot.run_dir != plain.run_dir and cot.run_dir.name.startswith("openai__fake-model+ctx1200+sfx-")
    recs = read_run_records(cot.run_dir)
    assert len(recs) == 3 and all(r.input_tokens <= 1200 - 512 for r in recs.values())
    plain_recs = read_run_records(plain.run_dir)
    assert all(r.prompt_sha256 != plain_recs[sid].prompt_sha256 for sid, r in recs.items())
    assert srv.stats.total == 6
    # what was sent: the rendered, fitted prompt with the suffix at its end (the record's hash is of that text)
    from academiceval.runs.prepare import PromptPreparer
    from academiceval.store.artifacts import load_round
    from academiceval.store.hashing import sha256_hex

    sample = next(s for s in load_round(sample_round).distinct_samples() if s.sample_id in recs)
    prep = PromptPreparer(context_length=1200, tokenizer="bert-base-uncased", prompt_suffix=suffix)(sample, 512)
    assert prep.prompt.endswith(suffix) and sha256_hex(prep.prompt) == recs[sample.sample_id].prompt_sha256
    with pytest.raises(ConfigError, match="prompt_suffix"):  # the same directory with another suffix is refused
        other = RunConfig(**base, context_length=1200, prompt_suffix="x", run_name=cot.run_dir.name)
        run_round(ws, sample_round, other)
