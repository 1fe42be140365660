"""`academiceval run` killed with SIGKILL at random (seeded) moments, then resumed.

Claim under test: the server sees each sample's request once, plus at most the requests in flight at each kill,
and the final records equal those of an uninterrupted run.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
from academiceval.store.artifacts import iter_jsonl, read_run_records
from academiceval.store.models import RunRecord

MAX_CONN = 4
KILLS = 2


def cli(round_dir: Path, home: Path, url: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "academiceval.cli.main",
        "run",
        str(round_dir),
        "--model",
        "openai/fake-model",
        "--base-url",
        url,
        "--home",
        str(home),
        "--max-connections",
        str(MAX_CONN),
    ]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e.pop("OPENAI_API_KEY", None)
    e["COLUMNS"] = "200"
    return e


def comparable(run_dir: Path) -> dict[str, tuple]:
    fields = ("prompt_sha256", "output_raw", "output", "error_code", "input_tokens", "output_tokens", "published")
    return {k: tuple(getattr(r, f) for f in fields) for k, r in read_run_records(run_dir).items()}


def test_kill_and_resume_loses_only_in_flight(sample_round, fake_server, tmp_path):
    n_samples = 48
    srv = fake_server(latency_s=0.03)
    home = tmp_path / "ws"
    rng = random.Random(20260401)
    kills = 0
    for _ in range(KILLS):
        start_total = srv.stats.total
        target = start_total + rng.randint(2, 10)  # kill after a random number of new requests
        proc = subprocess.Popen(
            cli(sample_round, home, srv.url), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while srv.stats.total < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.03))  # land anywhere within a request's life
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=30)
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    assert kills >= 1
    run_dir = home / "runs" / "2022-12-sample" / "openai__fake-model"
    done_before = len(read_run_records(run_dir))
    assert 0 < done_before < n_samples
    final = subprocess.run(cli(sample_round, home, srv.url), env=env(), capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr[-2000:]
    assert "resumed" in final.stdout and "done" in final.stdout  # the summary table

    # each sample's prompt was requested once, plus at most MAX_CONN in flight per kill
    counts = srv.stats.by_prompt
    recs = read_run_records(run_dir)
    assert len(recs) == n_samples and all(r.error is None for r in recs.values())
    assert all(counts[r.prompt_sha256] >= 1 for r in recs.values())
    extra = sum(c - 1 for c in counts.values())
    print(
        f"\nkill test: {kills} kills (SIGKILL), {srv.stats.total} requests for {len(counts)} distinct prompts "
        f"({n_samples} samples); repeated {extra} <= {kills} kills x {MAX_CONN} in flight = {kills * MAX_CONN}"
    )
    assert extra <= kills * MAX_CONN, (extra, kills)
    # no sample was recorded twice: finished work is never redone
    lines = [r.sample_id for p in run_dir.glob("*.jsonl") for r in iter_jsonl(p, RunRecord)]
    assert len(lines) == len(set(lines)) == n_samples

    # the same records as an uninterrupted run (same code in-process, fresh server and workspace)
    srv2 = fake_server(latency_s=0.0)
    clean = run_round(tmp_path / "ws2", sample_round, RunConfig(model="openai/fake-model", base_url=srv2.url))
    assert srv2.stats.total == len(srv2.stats.by_prompt) == len(counts)
    assert comparable(run_dir) == comparable(clean.run_dir)
