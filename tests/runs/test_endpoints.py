"""Many endpoints in one run (issue 13 item 4): least-loaded dispatch, a dead endpoint taken out, records name
the endpoint, bad endpoint lists refused before any work, the response cache shared across endpoints."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from academiceval.cli.main import app
from academiceval.errors import AcademicEvalError, ConfigError
from academiceval.models.endpoints import EndpointPool, read_endpoints_file
from academiceval.models.openai_backend import OpenAIBackend
from academiceval.models.retry import RetryPolicy
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round

N_SAMPLES = 48
FAST = RetryPolicy(max_attempts=6, initial_s=0.01, max_backoff_s=0.05)


def records(run_dir: Path) -> list[dict]:
    out = []
    for p in sorted(run_dir.glob("*.jsonl")):
        if p.name == "scores.jsonl":
            continue
        out += [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    return out


def test_dispatch_spreads_load_by_latency_and_records_name_the_endpoint(sample_round, fake_server, tmp_path):
    fast, slow = fake_server(latency_s=0.002), fake_server(latency_s=0.3)
    s = run_round(
        tmp_path / "ws",
        sample_round,
        RunConfig(model="openai/fake-model", endpoints=[fast.url, slow.url], max_connections=2),
        retry_policy=FAST,
    )
    recs = records(s.run_dir)
    assert len(recs) == N_SAMPLES and len({r["sample_id"] for r in recs}) == N_SAMPLES
    assert not [r for r in recs if r["error"]]
    by_endpoint = Counter(r["endpoint"] for r in recs if not r["cached"])
    assert set(by_endpoint) <= {fast.url, slow.url}
    assert None not in by_endpoint  # every requested answer names its server
    # (>=: a sample that shared an identical prompt's in-flight answer names the server that gave it too)
    assert by_endpoint[fast.url] + by_endpoint[slow.url] >= fast.stats.total + slow.stats.total
    assert fast.stats.total > 3 * max(1, slow.stats.total)  # the fast server frees its slots sooner
    assert s.endpoints is not None and s.endpoints[fast.url]["answered"] == fast.stats.total


def test_dead_endpoint_is_taken_out_and_the_run_completes(sample_round, fake_server, tmp_path):
    a, b, c = fake_server(latency_s=0.1), fake_server(latency_s=0.1), fake_server(latency_s=0.1)
    killed = threading.Event()

    def progress(done: int, total: int) -> None:
        if done >= 6 and not killed.is_set():
            killed.set()
            threading.Thread(target=b.stop, daemon=True).start()  # stop it from outside the run's loop

    s = run_round(
        tmp_path / "ws",
        sample_round,
        RunConfig(model="openai/fake-model", endpoints=[a.url, b.url, c.url], max_connections=2),
        retry_policy=FAST,
        progress=progress,
    )
    assert killed.is_set()
    recs = records(s.run_dir)
    ids = Counter(r["sample_id"] for r in recs)
    assert len(ids) == N_SAMPLES and max(ids.values()) == 1  # no loss, no duplicate
    assert not [r for r in recs if r["error"]]
    assert s.total("errors") == 0
    assert s.endpoints is not None
    assert {r["endpoint"] for r in recs if not r["cached"]} <= {a.url, b.url, c.url}  # cached: None
    assert s.endpoints[b.url]["taken_out"] >= 1 and s.endpoints[b.url]["failures"] >= 1
    assert s.endpoints[a.url]["answered"] + s.endpoints[c.url]["answered"] > 0


def test_connection_failures_take_an_endpoint_out_for_a_cooldown():
    pool = EndpointPool("m", base_urls=["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"], cooldown_s=30)
    import asyncio

    from academiceval.models.base import GenerationOptions
    from academiceval.models.errors import ConnectionFailedError

    async def go() -> None:
        for _ in range(2):
            with pytest.raises(ConnectionFailedError):
                await pool.generate("hi", GenerationOptions())
        await pool.aclose()

    asyncio.run(go())
    # each attempt went to the other endpoint (the first was out), both are out now, each counted once
    assert [e.requests for e in pool.endpoints] == [1, 1]
    assert all(e.taken_out == 1 and e.probing for e in pool.endpoints)


@pytest.mark.parametrize(
    "urls, message",
    [
        (["http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/"], "listed twice"),
        (["http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"], "listed twice"),
        (["http://127.0.0.1:8000/v1", "ftp://example.org"], r"not an http\(s\) URL"),
        (["http://127.0.0.1:8000/v1", "not a url"], r"not an http\(s\) URL"),
    ],
)
def test_duplicate_and_bad_endpoints_are_refused(urls, message):
    with pytest.raises(ConfigError, match=message):
        RunConfig(model="openai/fake-model", endpoints=urls)


def test_cli_refuses_bad_endpoint_lists_in_one_line(sample_round, fake_server, tmp_path):
    srv = fake_server()
    runner = CliRunner()
    home = str(tmp_path / "ws")
    res = runner.invoke(
        app,
        [
            "run",
            str(sample_round),
            "-m",
            "openai/fake-model",
            "--base-url",
            srv.url,
            "--base-url",
            srv.url,
            "--home",
            home,
        ],
    )
    assert res.exit_code != 0 and "listed twice" in res.output and "Traceback" not in res.output
    f = tmp_path / "eps.txt"
    f.write_text(f"# servers\n{srv.url}\n\nhttp//oops\n")
    res = runner.invoke(
        app, ["run", str(sample_round), "-m", "openai/fake-model", "--endpoints", str(f), "--home", home]
    )
    assert res.exit_code != 0 and "not an http(s) URL" in res.output
    assert srv.stats.total == 0  # nothing was sent
    assert read_endpoints_file(str(f)) == [srv.url, "http//oops"]


def test_model_is_checked_on_every_endpoint_before_any_work(sample_round, fake_server, tmp_path):
    good, other = fake_server(), fake_server(models=("another-model",))
    with pytest.raises(AcademicEvalError, match="not served by"):
        run_round(tmp_path / "ws", sample_round, RunConfig(model="openai/fake-model", endpoints=[good.url, other.url]))
    assert good.stats.total == 0 and other.stats.total == 0


def test_cache_hits_whichever_endpoint_answered(sample_round, fake_server, tmp_path):
    ws = tmp_path / "ws"
    a, b, c = fake_server(), fake_server(), fake_server()
    first = run_round(ws, sample_round, RunConfig(model="openai/fake-model", endpoints=[a.url, b.url]))
    sent = a.stats.total + b.stats.total
    assert sent > 0
    # another run over another set of servers (one new, one old): every answer comes from the cache
    again = run_round(
        ws, sample_round, RunConfig(model="openai/fake-model", endpoints=[c.url, a.url], run_name="other-servers")
    )
    assert again.total("cached") == N_SAMPLES
    assert a.stats.total + b.stats.total == sent and c.stats.total == 0
    assert {r["endpoint"] for r in records(again.run_dir)} == {None}  # nobody answered: cached
    assert first.run_dir != again.run_dir
    # a single server keeps its own key (existing caches still hit): the identity names the URL
    assert OpenAIBackend("fake-model", base_url=a.url).cache_identity()["base_url"] == a.url
    assert "base_url" not in EndpointPool("fake-model", base_urls=[a.url, b.url]).cache_identity()


def test_a_429_shrinks_only_that_endpoints_window(fake_server):
    import asyncio

    from academiceval.models.base import GenerationOptions
    from academiceval.models.errors import RateLimitedError

    busy, calm = fake_server(fail_all=429), fake_server()
    pool = EndpointPool("fake-model", base_urls=[busy.url, calm.url], max_connections=8)

    async def go() -> None:
        try:
            with pytest.raises(RateLimitedError):
                await pool.generate("hello there", GenerationOptions())  # the first pick (a tie): busy
            out = await pool.generate("hello again", GenerationOptions())
            assert out.raw["endpoint"] == calm.url  # busy is now the more loaded (its window halved)
        finally:
            await pool.aclose()

    asyncio.run(go())
    assert [e.limiter.limit for e in pool.endpoints] == [4, 8]
    assert pool.endpoints[0].taken_out == 0  # a 429 is back-pressure, not a failure: it stays in the rotation
