"""Response cache keys and storage, record files (torn lines, last record wins), path guards."""

from __future__ import annotations

import sqlite3
from datetime import date

import pytest

from academiceval.errors import ConfigError
from academiceval.models.base import Completion, GenerationOptions
from academiceval.models.cache import ResponseCache, cache_key
from academiceval.store.artifacts import Layout, RecordWriter, iter_jsonl, records_file, safe_name
from academiceval.store.models import RunRecord

IDENT = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8000/v1"}
SHA = "a" * 64


def test_key_depends_on_every_component():
    base = cache_key(IDENT, GenerationOptions(max_tokens=32), SHA)
    assert base == cache_key(dict(reversed(IDENT.items())), GenerationOptions(max_tokens=32), SHA)  # order-free
    variants = [
        cache_key({**IDENT, "model": "m2"}, GenerationOptions(max_tokens=32), SHA),
        cache_key({**IDENT, "base_url": "http://127.0.0.1:9000/v1"}, GenerationOptions(max_tokens=32), SHA),
        cache_key(IDENT, GenerationOptions(max_tokens=33), SHA),
        cache_key(IDENT, GenerationOptions(max_tokens=32, temperature=0.5), SHA),
        cache_key(IDENT, GenerationOptions(max_tokens=32, stop=["\n"]), SHA),  # extra options count too
        cache_key(IDENT, GenerationOptions(max_tokens=32), "b" * 64),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_cache_commits_by_default_and_batches_on_request(tmp_path):
    c = ResponseCache.in_workspace(tmp_path)
    c.put("k1", IDENT, SHA, Completion(text="hello", output_tokens=1))
    other = sqlite3.connect(c.path)
    assert other.execute("SELECT COUNT(*) FROM response").fetchone()[0] == 1  # visible to another connection
    b = ResponseCache(tmp_path / "b.sqlite", batch=10, max_delay_s=60)
    b.put("k2", IDENT, SHA, Completion(text="x"))
    assert b.get("k2").text == "x"  # its own connection sees it at once
    assert sqlite3.connect(b.path).execute("SELECT COUNT(*) FROM response").fetchone()[0] == 0
    b.close()
    assert sqlite3.connect(b.path).execute("SELECT COUNT(*) FROM response").fetchone()[0] == 1
    assert ResponseCache(tmp_path / "b.sqlite").get_many(["k2", "nope"]).keys() == {"k2"}
    assert ResponseCache(tmp_path / "b.sqlite", enabled=False).get("k2") is None


def test_restore_inserts_only_missing_rows(tmp_path):
    c = ResponseCache(tmp_path / "c.sqlite")
    c.put("k1", IDENT, SHA, Completion(text="original"))
    n = c.restore({"k1": (SHA, IDENT, Completion(text="from record")), "k2": (SHA, IDENT, Completion(text="new"))})
    assert n == 1 and c.get("k1").text == "original" and c.get("k2").text == "new"


def test_path_guard(tmp_path):
    c = ResponseCache.in_workspace(tmp_path)
    assert c.path == (tmp_path / "cache" / "responses.sqlite").resolve()  # through the workspace layout
    for bad in (("..", "x"), ("/etc", "passwd"), ("a", "..", "..", "b")):
        with pytest.raises(ConfigError, match="not a safe"):
            Layout(tmp_path.resolve()).run_dir(*bad[:2])


def rec(i: int, **kw) -> RunRecord:
    return RunRecord(
        sample_id=f"title/random:2/2212.{i:05d}",
        task="title",
        setting="random:2",
        split="test",
        arxiv_id=f"2212.{i:05d}",
        published=date(2022, 12, 1),
        prompt_sha256=SHA,
        **kw,
    )


def test_records_last_wins_and_torn_tail_is_cut(tmp_path):
    assert safe_name("openai/gpt-4o") == "openai__gpt-4o" and safe_name("mixed:1+1") == "mixed_1+1"
    for hostile in ("../../etc", "a/../b", "/abs", ".hidden"):
        assert "/" not in safe_name(hostile) and not safe_name(hostile).startswith(".")
    w = RecordWriter(tmp_path)
    w.append(rec(1, error="HTTP 429", error_code="rate_limited", retryable=True))
    w.append(rec(2, output_raw="A title", output="A title"))
    w.append(rec(1, output_raw="Late title", output="Late title"), urgent=False)
    w.close()
    path = records_file(tmp_path, "title", "random:2")
    assert path.name == "title-random2.jsonl"
    got = {r.sample_id: r for r in iter_jsonl(path, RunRecord)}
    assert got["title/random:2/2212.00001"].output == "Late title" and len(got) == 2
    path.write_bytes(path.read_bytes() + b'{"sample_id": "title/random:2/2212.0000')  # kill -9 mid-write
    assert len(list(iter_jsonl(path, RunRecord))) == 3
    w = RecordWriter(tmp_path)
    w.append(rec(3, output_raw="x", output="x"))
    w.close()
    lines = path.read_bytes().splitlines()
    assert len(lines) == 4 and all(line.startswith(b"{") and line.endswith(b"}") for line in lines)
