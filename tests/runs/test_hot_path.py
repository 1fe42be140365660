"""The runner's batched hot path (samples prepared and their answers looked up in batches, cache rows buffered
until the commit) keeps every guarantee of the one-at-a-time path: the same records, keys, memos and prompt hashes
at any concurrency, a record flushed before its worker sends anything else (so `kill -9` still loses at most the
requests in flight), and cache rows visible to their writer before the commit."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from academiceval.models.base import Capabilities, Completion, GenerationOptions
from academiceval.models.cache import SCHEMA, ResponseCache
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import GC_GEN0_THRESHOLD, run_round
from academiceval.store.artifacts import read_run_records

IDENT = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8000/v1"}
VOLATILE = ("finished_at", "latency_s")


def _lines(run_dir: Path) -> dict[str, dict]:
    out = {}
    for f in sorted(run_dir.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            row = json.loads(line)
            out[row["sample_id"]] = {k: v for k, v in row.items() if k not in VOLATILE}
    return out


def test_records_keys_and_hashes_are_the_same_at_any_concurrency(sample_round, fake_server, tmp_path):
    srv = fake_server()
    runs = {}
    for conc in (1, 3, 16):  # workers taking prepared samples from shared batches, or a single one
        home = tmp_path / f"c{conc}"
        s = run_round(home, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url, max_connections=conc))
        assert s.total("errors") == 0 and s.total("done") == s.total("selected") == 48
        rows = sqlite3.connect(home / "cache" / "responses.sqlite").execute(
            "SELECT key, prompt_sha256, completion FROM response ORDER BY key"
        )
        memos = sqlite3.connect(home / "cache" / "responses.sqlite").execute(
            "SELECT key, prepared FROM prompt_memo ORDER BY key"
        )
        runs[conc] = (_lines(s.run_dir), rows.fetchall(), memos.fetchall())
        for line in (s.run_dir / "abstract-zero-shot.jsonl").read_text().splitlines():
            assert list(json.loads(line))[:3] == ["sample_id", "task", "setting"]  # declaration order kept
    assert runs[1] == runs[3] == runs[16]
    assert len(runs[1][1]) == len({r["prompt_sha256"] for r in runs[1][0].values()})  # one row per distinct prompt
    assert srv.stats.total == 3 * len(runs[1][1])  # each run asked each distinct prompt once (twins shared)


class _WatchingBackend:
    """A backend that checks, at every request, that the answers already returned are on disk: every worker's
    earlier answers must be flushed before it sends again, so in flight + answered-but-unrecorded <= workers."""

    name = "watch"
    capabilities = Capabilities()

    def __init__(self, run_dir: Path, workers: int) -> None:
        self.run_dir, self.workers = run_dir, workers
        self.in_flight = self.answered = self.calls = 0
        self.worst = 0

    def cache_identity(self) -> dict[str, str]:
        return {"backend": "watch", "model": "m"}

    def _recorded(self) -> int:
        return sum(f.read_bytes().count(b"\n") for f in self.run_dir.glob("*.jsonl"))

    async def generate(self, prompt: str, options: GenerationOptions, sample=None) -> Completion:
        self.calls += 1
        self.in_flight += 1
        exposed = self.in_flight + self.answered - self._recorded()
        self.worst = max(self.worst, exposed)
        await asyncio.sleep(0.001 * (self.calls % 5))  # answers finish out of order, several in one loop iteration
        self.in_flight -= 1
        self.answered += 1
        return Completion(text=f"answer to {len(prompt)} {prompt[-40:]}", output_tokens=5)

    async def aclose(self) -> None:
        return None


def test_a_record_is_flushed_before_its_worker_sends_again(sample_round, tmp_path):
    workers = 4
    run_dir = tmp_path / "ws" / "runs" / "2022-12-sample" / "watch"
    backend = _WatchingBackend(run_dir, workers)
    cfg = RunConfig(model="openai/m", max_connections=workers, run_name="watch", use_cache=False)
    s = run_round(tmp_path / "ws", sample_round, cfg, backend=backend)
    assert s.run_dir == run_dir and s.total("done") == 48 and backend.calls == 48
    assert 1 < backend.worst <= workers  # requests overlapped, and the kill bound held at every request
    assert len(read_run_records(run_dir)) == 48


def test_buffered_rows_are_seen_by_their_writer_and_misses_cost_no_query(tmp_path):
    c = ResponseCache(tmp_path / "c.sqlite", batch=100, max_delay_s=60)
    c.put("k1", IDENT, "a" * 64, Completion(text="one"))
    c.put_memo("m1", '{"x": 1}')
    assert c.get("k1").text == "one" and c.get_many(["k1", "k2"]).keys() == {"k1"}
    assert c.get_memos(["m1", "m2"]) == {"m1": '{"x": 1}'} and not c.is_committed("k1")
    assert sqlite3.connect(c.path).execute("SELECT COUNT(*) FROM response").fetchone()[0] == 0  # not committed
    c.put("k1", IDENT, "a" * 64, Completion(text="two"))  # INSERT OR REPLACE: the last write wins, in the buffer too
    assert c.get("k1").text == "two"
    assert c.get_many(["k3", "k4"], remember_misses=True) == {}
    other = ResponseCache(tmp_path / "c.sqlite")
    other.put("k3", IDENT, "b" * 64, Completion(text="written elsewhere meanwhile"))
    assert c.get("k3") is None  # remembered as missing: no query (one call late, by design)
    assert c.get("k3").text == "written elsewhere meanwhile"  # the next look-up queries again
    c.put("k4", IDENT, "c" * 64, Completion(text="four"))
    assert c.get("k4").text == "four"  # a write clears the remembered miss
    c.flush()
    assert c.is_committed("k1") and c.is_committed("k4")
    back = sqlite3.connect(c.path).execute("SELECT key, completion FROM response ORDER BY key").fetchall()
    assert [(k, json.loads(v)["text"]) for k, v in back] == [
        ("k1", "two"),
        ("k3", "written elsewhere meanwhile"),
        ("k4", "four"),
    ]
    c.close()


def test_damage_found_at_the_commit_keeps_the_batch(tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    c = ResponseCache(path, batch=100, max_delay_s=60)
    c.put("k1", IDENT, "a" * 64, Completion(text="kept"))
    c.conn.close()  # the file is replaced by garbage under the open cache
    c._conn = None
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"\x00garbage" * 1000)
    c.flush()
    c.close()
    assert c.recovered and "moved aside" in caplog.text
    assert ResponseCache(path).get("k1").text == "kept"


def _bench():
    spec = importlib.util.spec_from_file_location(
        "runner_overhead", Path(__file__).resolve().parents[2] / "benchmarks" / "runner_overhead.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("runner_overhead", mod)  # its dataclasses look their module up
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.mark.parametrize(
    ("kind", "raw_over_this", "this_vs_cold", "refused"),
    [
        ("runner", 0.6, None, False),
        ("runner", 1.41, None, True),  # the old script's harness/raw at concurrency 64: cheaper than doing less
        ("sdk", 1.05, None, True),
        ("replay", 4.0, 0.2, False),  # a replay may cost less than raw: it sends nothing
        ("replay", 0.5, 1.1, True),  # but never more than the cold run it replays
    ],
)
def test_benchmark_refuses_ratios_that_contradict_themselves(kind, raw_over_this, this_vs_cold, refused):
    why = _bench().contradiction(kind, raw_over_this, this_vs_cold)
    assert bool(why) == refused
    if refused:
        assert "INVALID" in why


def test_record_lines_are_model_dump_json(tmp_path):
    """The writer serialises through pydantic's serializer directly: the same bytes as `model_dump_json`."""
    from datetime import date

    from academiceval.store.artifacts import RecordWriter, new_record, records_file
    from academiceval.store.models import RunRecord

    base = dict(
        sample_id="abstract/zero-shot/2212.00001",
        task="abstract",
        setting="zero-shot",
        split="test",
        arxiv_id="2212.00001",
        published=date(2022, 12, 1),
        finished_at="2026-11-26T02:00:00+00:00",
        prompt_sha256="a" * 64,
    )
    recs = [
        new_record(**base, output_raw="Ünïcode “quotes” \u2028 and \ufffd", output="x", latency_s=0.0123, attempts=1),
        new_record(**base, epoch=2, error="HTTP 500: boom", error_code="server_error", retryable=True),
        new_record(**base, endpoint="http://127.0.0.1:9/v1", prompt_info={"retrieved": [{"rank": 1, "score": 0.5}]}),
        RunRecord.model_validate({**base, "published": "2022-12-01", "warnings": ["invalid_utf8"], "cached": True}),
    ]
    w = RecordWriter(tmp_path)
    w.append(recs[0])
    w.append_many(recs[1:3])
    w.append(recs[3], urgent=False)
    w.close()
    got = records_file(tmp_path, "abstract", "zero-shot").read_bytes()
    assert got == b"".join(r.model_dump_json().encode() + b"\n" for r in recs)


def test_memo_json_is_json_dumps_with_default_str():
    from academiceval.runs.prepare import Prepared

    extras = {"full_tokens": 812, "tokenizer": "tiktoken:o200k_base", "retrieved": [{"id": "c1", "score": 0.5}]}
    for prep in (
        Prepared(prompt="p", prompt_sha256="ab" * 32),  # a plain rendering
        Prepared(prompt="p", prompt_sha256=hashlib.sha256(b"x").hexdigest()),
        Prepared(prompt="p", prompt_sha256='not/hex "quoted" é'),  # something to escape
        Prepared(prompt="p", prompt_sha256="ab" * 32, input_tokens=False, tokens_cut=0.0),  # json writes these apart
        Prepared(prompt="p", prompt_sha256="ab" * 32, reason=""),
        Prepared(prompt="p", prompt_sha256="ab" * 32, extras={"k": 1}),
        Prepared(
            prompt="p",
            prompt_sha256="cd" * 32,
            input_tokens=9,
            tokens_cut=3,
            truncation="body-tail-cut",
            skipped=True,
            reason='too "long" — é',
            extras={**extras, "path": Path("/x")},
        ),
    ):
        d = {k: getattr(prep, k) for k in ("prompt_sha256", "input_tokens", "tokens_cut", "truncation", "skipped")}
        d.update(reason=prep.reason, extras=prep.extras)
        assert prep.memo_json() == json.dumps(d, default=str)
        assert Prepared.from_memo(prep.memo_json()).prompt_sha256 == prep.prompt_sha256


def test_the_garbage_collector_is_unfrozen_after_a_run_even_a_failed_one(sample_round, fake_server, tmp_path):
    import gc

    srv = fake_server()
    cfg = RunConfig(model="openai/fake-model", base_url=srv.url, max_connections=4)
    frozen: list[int] = []
    thresholds: list[tuple[int, int, int]] = []
    before = gc.get_threshold()

    def watch(done: int, total: int) -> None:
        frozen.append(gc.get_freeze_count())
        thresholds.append(gc.get_threshold())

    s = run_round(tmp_path / "a", sample_round, cfg, progress=watch)
    assert s.total("done") == 48 and max(frozen) > 0 and gc.get_freeze_count() == 0  # frozen during the phase only
    assert set(thresholds) == {(max(before[0], GC_GEN0_THRESHOLD), *before[1:])} and gc.get_threshold() == before

    def fail(done: int, total: int) -> None:
        if done >= 5:
            raise RuntimeError("progress display died")

    with pytest.raises(RuntimeError, match="progress display died"):
        run_round(tmp_path / "b", sample_round, cfg, progress=fail)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_a_new_cache_file_has_16k_pages_and_an_old_4k_file_keeps_its_own(tmp_path):
    """New cache files get 16 KiB pages (fewer WAL frames per commit); a file made before (4 KiB pages, as SQLite's
    default made them) keeps its page size, its rows are read back and new rows go in beside them."""
    new = ResponseCache(tmp_path / "new.sqlite", batch=100)
    new.put("k1", IDENT, "a" * 64, Completion(text="one"))
    new.close()
    old_path = tmp_path / "old.sqlite"
    with sqlite3.connect(old_path) as conn:  # an older cache: default page size, the same schema, one row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
        conn.execute(
            "INSERT INTO response VALUES (?,?,?,?,?,?)",
            ("k0", "openai", "m", "b" * 64, Completion(text="zero").model_dump_json(), "2026-01-01T00:00:00+00:00"),
        )
    old = ResponseCache(old_path, batch=100)
    assert old.get("k0").text == "zero"
    old.put("k2", IDENT, "c" * 64, Completion(text="two"))
    old.close()
    sizes = {p.name: sqlite3.connect(p).execute("PRAGMA page_size").fetchone()[0] for p in (new.path, old_path)}
    assert sizes == {"new.sqlite": 16384, "old.sqlite": 4096}
    assert ResponseCache(new.path).get("k1").text == "one" and ResponseCache(old_path).get("k2").text == "two"
