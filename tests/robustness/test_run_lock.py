"""One writer per run directory (issue 10, finding 8): two `run`s of the same model on the same round used to
append every sample twice (67 duplicate lines for 75 samples)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from academiceval.models.retry import RetryPolicy
from academiceval.runs.lock import LOCK_NAME, RunLock, RunLockedError

from .conftest import record_lines, run_records

FAST = RetryPolicy(max_attempts=3, initial_s=0.001, max_backoff_s=0.004)
HOLD = """
import sys, time
from academiceval.runs.lock import RunLock
lock = RunLock(sys.argv[1]).acquire()
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
lock.release()
"""


def holder(run_dir: Path, seconds: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run_dir), str(seconds)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.timeout(60)
def test_a_second_writer_is_refused_naming_the_holder_and_a_killed_holder_is_taken_over(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "r" / "m"
    proc = holder(run_dir, 120)
    try:
        with pytest.raises(RunLockedError) as ei:
            RunLock(run_dir).acquire()
        msg = str(ei.value)
        assert f"pid {proc.pid}" in msg and socket.gethostname() in msg and "started 20" in msg
        assert "--run-name" in msg and str(run_dir) in msg
        os.kill(proc.pid, signal.SIGKILL)  # kill -9: the holder file stays, the OS lock goes with the process
        proc.wait()
        lock = RunLock(run_dir).acquire()
        assert lock.took_over is not None and lock.took_over["pid"] == proc.pid
        lock.release()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.timeout(60)
def test_wait_s_waits_for_the_holder(tmp_path: Path) -> None:
    proc = holder(tmp_path, 1.0)
    try:
        with RunLock(tmp_path, wait_s=50, poll_s=0.05) as lock:
            assert lock.held and lock.took_over is None  # released properly: nothing stale
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stale_holder_file_without_os_lock_is_taken_over(tmp_path: Path, monkeypatch) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    info = {"pid": dead.pid, "host": socket.gethostname(), "started_at": "2026-01-01T00:00:00+00:00"}
    (tmp_path / LOCK_NAME).write_text(json.dumps(info))
    import academiceval.runs.lock as mod

    monkeypatch.setattr(mod, "fcntl", None)  # a file system without flock: the holder file decides
    with RunLock(tmp_path) as lock:
        assert lock.took_over == info
        with pytest.raises(RunLockedError, match=f"pid {os.getpid()}"):
            RunLock(tmp_path).acquire()  # this process is alive: its lock is respected
    (tmp_path / LOCK_NAME).write_text(json.dumps({**info, "host": "elsewhere"}))
    with pytest.raises(RunLockedError, match="elsewhere"):  # another host's pid cannot be checked: trusted
        RunLock(tmp_path).acquire()


@pytest.mark.timeout(120)
def test_two_concurrent_runs_of_the_same_model_never_double_a_record(robust_round, fake_server, tmp_path) -> None:
    from academiceval.runs.runner import run_round_async

    srv = fake_server(latency_s=0.01)
    ws = tmp_path / "ws"

    async def both():
        from academiceval.runs.config import RunConfig

        config = RunConfig(model="openai/fake-model", base_url=srv.url)
        calls = [run_round_async(ws, robust_round, config, retry_policy=FAST) for _ in range(2)]
        return await asyncio.gather(*calls, return_exceptions=True)

    results = asyncio.run(both())
    errors = [r for r in results if isinstance(r, BaseException)]
    done = [r for r in results if not isinstance(r, BaseException)]
    assert len(done) == 1 and len(errors) == 1 and isinstance(errors[0], RunLockedError), results
    lines = record_lines(done[0].run_dir)
    ids = [ln["sample_id"] for ln in lines]
    assert len(ids) == len(set(ids)) == len(run_records(done[0].run_dir)) == done[0].total("selected")
    assert (done[0].run_dir / LOCK_NAME).read_text() == ""  # released
