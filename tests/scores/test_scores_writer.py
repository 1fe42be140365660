"""scores.jsonl has one writer (issue 26, finding 8): a second concurrent `score` of the same run refuses or
waits — never doubles judge lines or pays judge calls twice — and a torn last line is cut before the next
append instead of swallowing it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from academiceval.runs.lock import RunLockedError
from academiceval.scores.config import ScoreConfig
from academiceval.scores.rescore import score_runs, scores_lock
from academiceval.store.artifacts import SCORES, SCORES_LOCK, read_scores
from academiceval.testing.fake_server import FakeServerConfig, start_in_thread
from academiceval.testing.judges import quoting_judge

SRC = Path(__file__).resolve().parents[2] / "src"


def _score(run_dir: Path, home: Path, url: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
    args = ["score", str(run_dir), "--metrics", "judge", "--judge", "openai/fake-model", "--judge-base-url", url]
    return subprocess.Popen(
        [sys.executable, "-m", "academiceval.cli.main", *args, "--home", str(home), *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_holder(run_dir: Path, proc: subprocess.Popen[str]) -> None:
    lock = run_dir / SCORES_LOCK
    for _ in range(600):
        if lock.exists() and lock.read_text().strip():
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the first score never took the lock")


def test_a_second_concurrent_score_refuses_or_waits_and_nothing_is_paid_twice(run_home) -> None:
    home, run_dir = run_home
    gate = threading.Event()  # the judge answers only once the test opens the gate: the first score is in flight

    def slow_judge(prompt: str) -> str:
        gate.wait(60)
        return quoting_judge(prompt)

    with start_in_thread(FakeServerConfig(responder=slow_judge)) as server:
        first = _score(run_dir, home, server.url)
        _wait_for_holder(run_dir, first)
        second = _score(run_dir, home, server.url)  # no --wait: refuses at once, naming the holder
        _, err2 = second.communicate(timeout=120)
        gate.set()
        _, err1 = first.communicate(timeout=120)
        assert first.returncode == 0, err1
        assert second.returncode == 1 and "another `academiceval score` is writing this run's scores" in err2
        assert "pid" in err2 and "Traceback" not in err2
        judge = [r for r in read_scores(run_dir) if r.metric.startswith("judge-")]
        assert len(judge) == 12 and len({r.sample_id for r in judge}) == 12  # one line per sample
        paid = server.stats.total
        assert paid == 2 * 11  # 11 answered samples × both orders (one sample's generation failed)

        # from nothing again (scores and the response cache removed), two at once, the second told to wait
        (run_dir / SCORES).unlink()
        for f in (home / "cache").glob("responses.sqlite*"):
            f.unlink()
        gate.clear()
        third = _score(run_dir, home, server.url)
        _wait_for_holder(run_dir, third)
        fourth = _score(run_dir, home, server.url, "--wait", "120")
        time.sleep(3)  # let the fourth start and find the lock held
        gate.set()
        _, err3 = third.communicate(timeout=180)
        _, err4 = fourth.communicate(timeout=180)
        assert third.returncode == 0 and fourth.returncode == 0, (err3, err4)
        assert "0 new score records, 12 already scored" in " ".join(err4.split())  # it waited, then found all done
        judge = [r for r in read_scores(run_dir) if r.metric.startswith("judge-")]
        assert len(judge) == 12
        assert server.stats.total == 2 * paid  # the third paid once more (no cache); the fourth paid nothing


def test_held_lock_in_process_refuses_then_waits(run_home) -> None:
    home, run_dir = run_home
    with scores_lock(run_dir, 0.0), pytest.raises(RunLockedError, match="another `academiceval score`"):
        score_runs([run_dir], ScoreConfig(metrics=["rouge-l"]), home=home, wait_s=0.2)
    res = score_runs([run_dir], ScoreConfig(metrics=["rouge-l"]), home=home)[0]
    assert res.written == {"rouge-l": 12}


def test_a_torn_last_line_is_cut_before_the_next_append(run_home) -> None:
    """A disk-full stop left half a line; the next append used to glue its first record onto it (both lost)."""
    home, run_dir = run_home
    score_runs([run_dir], ScoreConfig(metrics=["rouge-l"]), home=home)
    path = run_dir / SCORES
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # the last record torn in half
    bad: list[str] = []
    assert len(read_scores(run_dir, bad)) == 11 and "torn last line" in bad[0]
    res = score_runs([run_dir], ScoreConfig(metrics=["rouge-l", "rouge-1"]), home=home)[0]
    assert res.written == {"rouge-l": 1, "rouge-1": 12}  # the torn record is scored again, nothing else
    bad = []
    recs = read_scores(run_dir, bad)
    assert bad == [] and len(recs) == 24
    assert all(json.loads(line) for line in path.read_text().splitlines())
