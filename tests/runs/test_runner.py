"""`run_round` end to end against the local server, on a round of real paper text."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import pytest

from academiceval.errors import ConfigError
from academiceval.models.base import GenerationOptions
from academiceval.models.errors import MissingAPIKeyError, UnknownModelError
from academiceval.models.postprocess import postprocess
from academiceval.models.retry import RetryPolicy
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.store.artifacts import RoundIntegrityError, iter_jsonl, load_round, read_run_records, records_file
from academiceval.store.models import RunRecord
from academiceval.testing.fake_server import _pick, _unit

FAST = RetryPolicy(max_attempts=4, initial_s=0.01, max_backoff_s=0.05)
N_SAMPLES = 48  # 12 papers x (title, abstract) x (zero-shot, random:1)


def records(run_dir: Path):
    return read_run_records(run_dir)


def comparable(recs):
    keep = ("prompt_sha256", "output_raw", "output", "error_code", "input_tokens", "output_tokens", "published")
    return {k: tuple(getattr(r, f) for f in keep) for k, r in recs.items()}


def test_clean_run_writes_records_and_spec(sample_round, fake_server, tmp_path):
    srv = fake_server(latency_s=0.002)
    s = run_round(
        tmp_path / "ws", sample_round, RunConfig(model="openai/fake-model", base_url=srv.url, max_connections=8)
    )
    assert s.total("selected") == N_SAMPLES and s.total("done") == N_SAMPLES and s.total("errors") == 0
    recs = records(s.run_dir)
    assert len(recs) == N_SAMPLES
    view = load_round(sample_round)
    by_id = {x.sample_id: x for x in view.distinct_samples()}
    for r in recs.values():
        sample = by_id[r.sample_id]
        assert r.published == sample.published and r.arxiv_id == sample.arxiv_id
        assert r.output_tokens > 0 and r.input_tokens > 100 and r.error is None
        assert srv.stats.by_prompt[r.prompt_sha256] >= 1  # the hash we record is the hash of what was sent
        assert r.output_raw.split()[0].startswith("[")
        assert r.output == postprocess(r.task, r.output_raw)  # raw kept, refined beside it
    # demos change the prompt; a random:1 sample that drew no demo equals its zero-shot twin and costs no request
    unique = {r.prompt_sha256 for r in recs.values()}
    assert N_SAMPLES - 2 <= len(unique) < N_SAMPLES
    assert sum(r.cached for r in recs.values()) == N_SAMPLES - len(unique) == N_SAMPLES - srv.stats.total
    assert max(srv.stats.by_prompt.values()) == 1
    spec = json.loads((s.run_dir / "run.json").read_text())
    assert spec["round_manifest_sha256"] == view.manifest_sha256 and spec["backend"] == "openai"
    assert spec["task_max_tokens"] == {"abstract": 512, "title": 32} and spec["package_version"]
    assert s.run_dir == tmp_path / "ws" / "runs" / "2022-12-sample" / "openai__fake-model"
    assert records_file(s.run_dir, "title", "random:1").exists()
    # title answers are capped by the per-task default (32 tokens); the server honours max_tokens
    assert all(r.output_tokens <= 32 for r in recs.values() if r.task == "title")


def test_faults_are_retried_or_recorded(sample_round, fake_server, tmp_path):
    srv = fake_server(
        transient={"429": 0.15, "500": 0.15, "malformed": 0.1, "timeout": 0.05},
        permanent={"empty": 0.1, "refusal": 0.1, "invalid_utf8": 0.1},
        retry_after_s=0.01,
        hang_s=1.5,
    )
    s = run_round(
        tmp_path / "ws",
        sample_round,
        RunConfig(model="openai/fake-model", base_url=srv.url, max_connections=8, timeout=0.4),
        retry_policy=FAST,
    )
    recs = records(s.run_dir)
    assert len(recs) == N_SAMPLES
    expected = Counter()
    for r in recs.values():
        kind = _pick(srv.config.permanent, _unit(srv.config.seed, "permanent", r.prompt_sha256))
        want = {"empty": "empty_answer", "refusal": "refused"}.get(kind or "")
        assert r.error_code == want, r.sample_id
        if want is None:
            assert r.output_raw and not r.retryable
        # a damaged answer is kept (with U+FFFD) and flagged, not dropped
        assert ("invalid_utf8" in r.warnings) == (kind == "invalid_utf8"), r.sample_id
        if kind == "invalid_utf8":
            assert "\ufffd" in r.output_raw
        expected[kind or "ok"] += 1
    assert expected["empty"] and expected["refusal"] and expected["invalid_utf8"] and expected["ok"]
    assert s.retries > 0 and s.rate_limited > 0 and srv.stats.faults["429"] > 0 and srv.stats.faults["timeout"] > 0
    assert sum(r.attempts for r in recs.values()) == s.requests
    # transient faults hit only first attempts: every prompt needed at most 2 requests
    assert max(srv.stats.by_prompt.values()) <= 2


def test_resume_sends_nothing_and_cache_replays(sample_round, fake_server, tmp_path):
    srv = fake_server()
    ws = tmp_path / "ws"
    first = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    sent = srv.stats.total
    assert sent == len(srv.stats.by_prompt)  # no prompt twice
    again = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    assert srv.stats.total == sent and again.total("already_done") == N_SAMPLES and again.finished_now == 0
    before = comparable(records(first.run_dir))
    # records gone, cache kept: every answer is replayed from the cache, no request
    for p in first.run_dir.glob("*.jsonl"):
        p.unlink()
    replay = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    assert srv.stats.total == sent and replay.total("cached") == N_SAMPLES
    after = records(first.run_dir)
    assert comparable(after) == before and all(r.cached for r in after.values())
    # a different generation option is a different cache key (and needs its own run directory)
    with pytest.raises(ConfigError, match="different options"):
        run_round(
            ws,
            sample_round,
            RunConfig(model="openai/fake-model", base_url=srv.url, options=GenerationOptions(temperature=1)),
        )
    run_round(
        ws,
        sample_round,
        RunConfig(
            model="openai/fake-model",
            base_url=srv.url,
            options=GenerationOptions(temperature=1),
            run_name="t1",
            tasks=["title"],
            settings=["zero-shot"],
        ),
    )
    assert srv.stats.total == sent + 12


def test_retryable_errors_are_requested_again_next_run(sample_round, fake_server, tmp_path):
    srv = fake_server(transient={"500": 0.3}, transient_attempts=3)
    ws = tmp_path / "ws"
    one = RetryPolicy(max_attempts=2, initial_s=0.001, max_backoff_s=0.002)
    s1 = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url), retry_policy=one)
    failed = {k for k, r in records(s1.run_dir).items() if r.retryable}
    assert failed and s1.error_codes["server_error"] == len(failed)
    s2 = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url), retry_policy=one)
    assert s2.total("already_done") == N_SAMPLES - len(failed)
    assert s2.total("done") == len(failed) and not any(r.error for r in records(s1.run_dir).values())


def test_torn_last_line_is_tolerated(sample_round, fake_server, tmp_path):
    srv = fake_server()
    ws = tmp_path / "ws"
    s = run_round(
        ws,
        sample_round,
        RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["title"], settings=["zero-shot"]),
    )
    path = records_file(s.run_dir, "title", "zero-shot")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # a kill -9 mid-write
    assert len(list(iter_jsonl(path, RunRecord))) == 11
    sent = srv.stats.total
    s2 = run_round(
        ws,
        sample_round,
        RunConfig(model="openai/fake-model", base_url=srv.url, tasks=["title"], settings=["zero-shot"]),
    )
    assert s2.total("done") == 1 and s2.total("cached") == 1 and srv.stats.total == sent  # from the cache
    assert len(list(iter_jsonl(path, RunRecord))) == 12 and path.read_bytes().endswith(b"\n")


def test_tampered_round_is_refused_naming_the_file(sample_round, fake_server, tmp_path):
    srv = fake_server()
    victim = sorted(sample_round.glob("jsonl/*/test.jsonl"))[0]
    victim.write_bytes(victim.read_bytes().replace(b"the", b"teh", 1))
    rel = victim.relative_to(sample_round).as_posix()
    with pytest.raises(RoundIntegrityError, match=rel):
        run_round(tmp_path / "ws", sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    assert srv.stats.total == 0 and not (tmp_path / "ws" / "runs").exists()


def test_missing_key_and_unknown_model_fail_before_work(sample_round, fake_server, tmp_path, monkeypatch):
    srv = fake_server(models=("served",))
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError):
        run_round(
            tmp_path / "ws",
            sample_round,
            RunConfig(model="openai/gpt-x", base_url="https://api.example.com/v1", api_key_env="NO_SUCH_KEY"),
        )
    with pytest.raises(UnknownModelError, match="served"):
        run_round(tmp_path / "ws", sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    assert srv.stats.total == 0 and not list((tmp_path / "ws").rglob("*.jsonl"))


def test_context_length_errors_from_server_are_recorded(sample_round, fake_server, tmp_path):
    srv = fake_server(context_window=700)
    s = run_round(tmp_path / "ws", sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    recs = records(s.run_dir)
    too_long = [r for r in recs.values() if r.error_code == "context_length"]
    twins = sum(r.cached for r in too_long)  # same prompt as another sample: answered by that one request
    assert too_long and len(too_long) == srv.stats.faults["context_length"] + twins
    assert all(not r.retryable and "maximum context length is 700" in r.error for r in too_long)
    assert all(r.attempts == 1 for r in too_long if not r.cached)  # not retried
    assert all(0 < r.input_tokens <= 700 for r in recs.values() if r.error is None)  # server-reported
    assert all(r.output for r in recs.values() if r.error is None)
    again = run_round(tmp_path / "ws", sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    assert again.finished_now == 0  # a permanent error is a finished sample


def test_api_key_never_leaks(sample_round, fake_server, tmp_path, monkeypatch, caplog, capsys):
    secret = "sk-proj-SECRET-abcdefghijklmnopqrstuvwxyz-0123456789"
    monkeypatch.setenv("ACADEMICEVAL_TEST_KEY", secret)
    srv = fake_server(api_key=secret, transient={"429": 0.2, "500": 0.2}, retry_after_s=0.01)
    caplog.set_level(logging.DEBUG)
    ws = tmp_path / "ws"
    s = run_round(
        ws,
        sample_round,
        RunConfig(model="openai/fake-model", base_url=srv.url, api_key_env="ACADEMICEVAL_TEST_KEY"),
        retry_policy=FAST,
    )
    assert s.total("done") == N_SAMPLES and srv.stats.auth_headers == [f"Bearer {secret}"]  # it was sent...
    # ...and a wrong key gets a 401 whose body echoes the key: the error must not
    srv2 = fake_server(api_key="sk-other-other-other-other-other")
    with pytest.raises(MissingAPIKeyError) as ei:
        run_round(
            ws,
            sample_round,
            RunConfig(model="openai/fake-model", base_url=srv2.url, api_key_env="ACADEMICEVAL_TEST_KEY"),
        )
    out = capsys.readouterr()
    texts = [str(ei.value), caplog.text, out.out, out.err]
    for p in ws.rglob("*"):
        if p.is_file():
            texts.append(p.read_bytes().decode("utf-8", errors="replace"))
    assert len(texts) > 5
    for t in texts:
        assert secret not in t and secret[8:30] not in t


def test_replay_skips_rendering_and_tokenizing(sample_round, fake_server, tmp_path, monkeypatch):
    """A replay of a truncated run answers from the cache without preparing a single prompt again."""
    from academiceval.runs import prepare as prep_mod

    srv = fake_server()
    ws = tmp_path / "ws"
    kw = dict(base_url=srv.url, context_length=900, tokenizer="bert-base-uncased", tasks=["abstract"], limit=4)
    first = run_round(ws, sample_round, RunConfig(model="openai/fake-model", **kw))
    before = comparable(records(first.run_dir))
    recs = records(first.run_dir)
    assert all(r.tokens_cut > 0 and r.truncation != "none" for r in recs.values())
    assert all(r.input_tokens <= 900 - 512 for r in recs.values())  # budget = context - output reserve
    sent = srv.stats.total
    calls = []
    real_call = prep_mod.PromptPreparer.__call__
    monkeypatch.setattr(prep_mod.PromptPreparer, "__call__", lambda self, *a: calls.append(a) or real_call(self, *a))
    for p in first.run_dir.glob("*.jsonl"):
        p.unlink()
    replay = run_round(ws, sample_round, RunConfig(model="openai/fake-model", **kw))
    assert replay.total("cached") == 8 and srv.stats.total == sent
    assert len(calls) == 1  # only the up-front check of the options
    after = records(first.run_dir)
    assert comparable(after) == before
    assert {k: (r.tokens_cut, r.truncation) for k, r in after.items()} == {
        k: (r.tokens_cut, r.truncation) for k, r in recs.items()
    }
    # a different budget is a different memo and prompt: prepared and requested again (its own run directory)
    run_round(ws, sample_round, RunConfig(model="openai/fake-model", **{**kw, "context_length": 1000}))
    assert srv.stats.total > sent and len(calls) > 1


def test_lost_cache_rows_are_restored_from_records(sample_round, fake_server, tmp_path):
    """A killed process may lose uncommitted cache rows; the records are the durable log and refill them, so
    an unfinished sample sharing a recorded sample's prompt costs no request."""
    import shutil

    srv = fake_server()
    ws = tmp_path / "ws"
    first = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    recs = records(first.run_dir)
    by_prompt: dict[str, list[str]] = {}
    for r in recs.values():
        by_prompt.setdefault(r.prompt_sha256, []).append(r.sample_id)
    twins = [ids for ids in by_prompt.values() if len(ids) == 2]
    assert twins  # the random:1 sample that drew no demo has its zero-shot twin's prompt
    shutil.rmtree(ws / "cache")  # every cache row lost
    drop = {ids[0] for ids in twins}
    for p in first.run_dir.glob("*.jsonl"):
        kept = [line for line in p.read_text().splitlines(keepends=True) if json.loads(line)["sample_id"] not in drop]
        p.write_text("".join(kept))
    sent = srv.stats.total
    again = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url))
    assert srv.stats.total == sent and again.total("cached") == len(drop)
    assert comparable(records(first.run_dir)) == comparable(recs)


def test_overflow_skip_and_probes_are_recorded_not_sent(sample_round, fake_server, tmp_path):
    srv = fake_server()
    ws = tmp_path / "ws"
    s = run_round(
        ws,
        sample_round,
        RunConfig(
            model="openai/fake-model",
            base_url=srv.url,
            context_length=1200,
            tokenizer="bert-base-uncased",
            on_overflow="skip",
            tasks=["title"],
        ),
    )
    recs = records(s.run_dir)
    skipped = [r for r in recs.values() if r.skipped]
    assert skipped and s.total("skipped") == len(skipped) and s.error_codes["skipped_overflow"] == len(skipped)
    assert all(r.tokens_cut == 0 and "exceeds the budget" in r.error for r in skipped)
    assert srv.stats.total == len(recs) - len(skipped) - sum(r.cached for r in recs.values())
    assert s.run_dir.name == "openai__fake-model+ctx1200"
    again = run_round(
        ws,
        sample_round,
        RunConfig(
            model="openai/fake-model",
            base_url=srv.url,
            context_length=1200,
            tokenizer="bert-base-uncased",
            on_overflow="skip",
            tasks=["title"],
        ),
    )
    assert again.finished_now == 0  # a skip is final
    # the title-only probe does not apply to the title task (its label is the title): recorded as skipped
    before = srv.stats.total
    p = run_round(ws, sample_round, RunConfig(model="openai/fake-model", base_url=srv.url, probe="title-only", limit=2))
    precs = records(p.run_dir)
    assert p.run_dir.name == "openai__fake-model+probe-title-only" and len(precs) == 8
    assert all(r.skipped for r in precs.values() if r.task == "title")
    sent = [r for r in precs.values() if r.task == "abstract"]
    assert all(not r.skipped and r.error is None for r in sent) and srv.stats.total > before
    assert json.loads((p.run_dir / "run.json").read_text())["probe"] == "title-only"
