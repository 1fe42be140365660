"""The fast paths of a cache replay keep every guarantee: the same keys, byte-identical records, batched writes
that leave whole lines, progress that still reaches the end, and lazy flushes only for committed answers."""

from __future__ import annotations

import hashlib
import json
from datetime import date

from academiceval.models.base import Completion, GenerationOptions
from academiceval.models.cache import ResponseCache, cache_key
from academiceval.runs.config import RunConfig
from academiceval.runs.prepare import Prepared, PromptPreparer
from academiceval.runs.runner import run_round
from academiceval.store.artifacts import RecordWriter, iter_jsonl, new_record, read_run_records, records_file
from academiceval.store.models import RunRecord, Sample

IDENT = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8000/v1"}


def test_keys_keep_their_formula():
    """Hashing the long prefix once and copying the hasher must not move a single key (old caches stay valid)."""
    opts = GenerationOptions(max_tokens=32)
    prefix = json.dumps({"identity": IDENT, "options": opts.model_dump()}, sort_keys=True, separators=(",", ":"))
    for sha in ("a" * 64, "b" * 64):
        assert cache_key(IDENT, opts, sha) == hashlib.sha256(f"{prefix}|{sha}".encode()).hexdigest()
    sample = Sample(
        sample_id="title/zero-shot/2212.00001",
        round="r",
        task="title",
        setting="zero-shot",
        split="test",
        arxiv_id="2212.00001",
        paper_id="unarxive:2212.00001",
        published=date(2022, 12, 1),
        fields={"body": "text"},
        label="A title",
    )
    fp = b'{"renderer": "x"}'
    p = PromptPreparer()
    expected = hashlib.sha256(fp + f"|{'f' * 64}/{sample.sample_id}|32".encode()).hexdigest()
    assert p.memo_key(fp, sample, 32, "f" * 64) == expected
    assert p.memo_key(fp, sample, 33, "f" * 64) != p.memo_key(fp, sample, 32, "f" * 64)
    digest = hashlib.sha256(sample.model_dump_json().encode()).hexdigest()
    assert p.memo_key(fp, sample, 32) == hashlib.sha256(fp + f"|{digest}|32".encode()).hexdigest()


def test_memo_round_trip():
    prep = Prepared(
        prompt="p",
        prompt_sha256="c" * 64,
        input_tokens=7,
        tokens_cut=3,
        truncation="body-tail-cut",
        extras={"full_tokens": 10, "retrieved": [{"id": "c1", "score": 0.5, "rank": 1}]},
    )
    back = Prepared.from_memo(prep.memo_json())
    assert back == Prepared(**{**prep.__dict__, "prompt": ""})


def test_new_record_is_model_construct_without_its_cost():
    common = dict(
        sample_id="s",
        task="title",
        setting="zero-shot",
        split="test",
        arxiv_id="2212.00001",
        published=date(2022, 12, 1),
        finished_at="2026-01-01T00:00:00+00:00",
    )
    for kw in (
        {**common, "prompt_sha256": "a" * 64, "output_raw": "T", "cached": True, "prompt_info": {"x": 1}},
        {**common, "error": "bad sample", "error_code": "bad_input"},  # no prompt: the same partial object as before
    ):
        fast, slow = new_record(**kw), RunRecord.model_construct(**kw)
        assert fast.model_dump_json() == slow.model_dump_json()
        assert fast == slow and fast.model_fields_set == slow.model_fields_set
    a, b = new_record(**common), new_record(**common)
    a.warnings.append("invalid_utf8")
    assert b.warnings == [] and b.prompt_info == {}  # mutable defaults are not shared


def test_append_many_writes_whole_lines_per_file(tmp_path):
    def rec(i: int, setting: str) -> RunRecord:
        return RunRecord(
            sample_id=f"title/{setting}/{i}",
            task="title",
            setting=setting,
            split="test",
            arxiv_id=str(i),
            published=date(2022, 12, 1),
            prompt_sha256="a" * 64,
            output_raw=f"T{i}",
            output=f"T{i}",
            cached=True,
        )

    path = records_file(tmp_path, "title", "zero-shot")
    path.write_bytes(b'{"sample_id": "torn')  # a killed earlier run: the torn tail is cut before appending
    w = RecordWriter(tmp_path)
    batch = [rec(i, "zero-shot" if i % 3 else "random:1") for i in range(10)]
    w.append_many(batch)
    w.append_many([])
    # flushed already (no close): a kill now loses nothing of the batch
    got = {r.sample_id: r for r in iter_jsonl(path, RunRecord)} | {
        r.sample_id: r for r in iter_jsonl(records_file(tmp_path, "title", "random:1"), RunRecord)
    }
    assert got == {r.sample_id: r for r in batch}
    assert path.read_bytes().count(b"\n") == 6 and path.read_bytes().endswith(b"}\n")
    w.close()


def test_replay_is_batched_throttled_and_identical(sample_round, fake_server, tmp_path):
    srv = fake_server()
    ws = tmp_path / "ws"
    first = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["abstract"]))
    n = first.finished_now
    files = sorted(first.run_dir.glob("*.jsonl"))
    before = {p.name: [json.loads(line) for line in p.read_text().splitlines()] for p in files}
    for p in files:
        p.unlink()
    calls: list[tuple[int, int]] = []

    def on_progress(done: int, total: int) -> None:
        calls.append((done, total))

    kw = dict(base_url=srv.url, tasks=["abstract"])
    replay = run_round(ws, sample_round, RunConfig(model="openai/fake-model", **kw), progress=on_progress)
    assert replay.total("cached") == n and replay.requests == 0
    assert calls[-1] == (n, n) and len(calls) < n  # throttled, and the bar still ends full
    drop = ("finished_at", "latency_s", "cached", "attempts")  # what a replay legitimately changes

    def same(recs: list[dict]) -> dict[str, dict]:  # the first run finished in completion order, a replay in order
        return {r["sample_id"]: {k: v for k, v in r.items() if k not in drop} for r in recs}

    for p in files:
        after = [json.loads(line) for line in p.read_text().splitlines()]
        assert same(after) == same(before[p.name]) and len(after) == len(before[p.name])
        assert list(after[0]) == list(before[p.name][0])  # same fields, same order
    assert all(r.cached for r in read_run_records(first.run_dir).values())


def test_only_committed_answers_count_as_safe(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", batch=4)
    c = Completion(text="answer")
    cache.put("k1", IDENT, "a" * 64, c)
    assert not cache.is_committed("k1") and cache.get("k1") is not None  # visible to us, lost on a kill
    cache.flush()
    assert cache.is_committed("k1")
    for i in range(4):  # the 4th write commits the batch
        cache.put(f"k{i + 2}", IDENT, "a" * 64, c)
    assert all(cache.is_committed(f"k{i + 2}") for i in range(4))
    cache.close()
