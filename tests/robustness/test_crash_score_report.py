"""Crash consistency beyond `run`: `kill -9` during `score` (ROUGE only, and with the LLM judge on the local
server) and during `report`, then the same command again; the result must equal an uninterrupted one — nothing
lost, nothing doubled. Commands run as real processes (`python -m academiceval.cli.main`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from .conftest import run_model

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def cli(*args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "academiceval.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        **kw,
    )


def finish(proc: subprocess.Popen) -> str:
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    return out


def lines_of(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def kill_when(proc: subprocess.Popen, ready, poll_s: float = 0.02, limit_s: float = 240) -> bool:
    """SIGKILL `proc` as soon as `ready()`; False if it finished first."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if ready():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(poll_s)
    raise AssertionError("the command neither finished nor reached the kill point")


def score_lines(run_dir: Path) -> list[dict]:
    out = []
    for raw in (run_dir / "scores.jsonl").read_bytes().splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:  # a torn last line (the kill) is skipped by every reader
            continue
    return out


def comparable(lines: list[dict]) -> dict[tuple, object]:
    keep: dict[tuple, object] = {}
    for r in lines:
        key = (r["sample_id"], r["metric"], r.get("config_hash"))
        keep[key] = (r.get("values"), r.get("error"), r.get("details", {}).get("verdicts"))
    return keep


@pytest.fixture()
def scored_setup(robust_round: Path, fake_server, tmp_path: Path):
    """One workspace with two runs of the round (a baseline and a model on the local server)."""
    srv = fake_server(latency_s=0.0)
    ws = tmp_path / "ws"
    a = run_model(ws, robust_round, "baseline/lead").run_dir
    b = run_model(ws, robust_round, "openai/fake-model", base_url=srv.url).run_dir
    return ws, a, b, srv


@pytest.mark.parametrize("judge", [False, True], ids=["rouge", "judge"])
def test_kill_during_score_then_resume_equals_uninterrupted(scored_setup, fake_server, tmp_path, judge) -> None:
    ws, run_a, run_b, _ = scored_setup
    reference = tmp_path / "reference"
    shutil.copytree(ws, reference)
    ref_a = reference / run_a.relative_to(ws)
    if judge:
        slow = fake_server(latency_s=0.15)  # the judge's server: slow enough to be killed mid-way
        args = ["--metrics", "judge", "--judge", "openai/fake-model", "--judge-base-url", slow.url,
                "--against", str(run_b)]  # fmt: skip
        ref_args = [*args[:-1], str(reference / run_b.relative_to(ws))]
    else:
        args = ["--metrics", "rouge-l,rouge-1,rouge-2,rouge-lsum"]
        ref_args = args
    finish(cli("score", str(ref_a), *ref_args, "--home", str(reference)))
    want = score_lines(ref_a)
    assert want and len(want) == len(comparable(want))

    kills = 0
    for _ in range(3):  # kill it up to three times at growing progress, then let it finish
        proc = cli("score", str(run_a), *args, "--home", str(ws))
        have = lines_of(run_a / "scores.jsonl")
        if kill_when(proc, lambda h=have: lines_of(run_a / "scores.jsonl") > h):
            kills += 1
    finish(cli("score", str(run_a), *args, "--home", str(ws)))
    got = score_lines(run_a)
    per_key = Counter((r["sample_id"], r["metric"], r.get("config_hash")) for r in got)
    assert kills >= 1
    assert max(per_key.values()) == 1, [k for k, c in per_key.items() if c > 1][:5]  # nothing doubled
    assert comparable(got) == comparable(want)  # nothing lost, the same values
    print(f"score ({'judge' if judge else 'rouge'}): {kills} kills, {len(got)} score records = uninterrupted")


def report_files(out: Path) -> dict[str, bytes]:
    files = {}
    for f in sorted(out.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.suffix in (".html", ".md", ".json"):  # generation times differ between two reports
                data = b"\n".join(ln for ln in data.splitlines() if b"generated" not in ln.lower())
            files[str(f.relative_to(out))] = data if f.suffix != ".png" else b"png"
    return files


def test_kill_during_report_then_rerun_equals_uninterrupted(scored_setup, tmp_path) -> None:
    ws, run_a, run_b, _ = scored_setup
    for run in (run_a, run_b):
        finish(cli("score", str(run), "--metrics", "rouge-l", "--home", str(ws)))
    ref_out, out = tmp_path / "ref-report", tmp_path / "report"
    finish(cli("report", "--home", str(ws), "--out", str(ref_out)))
    want = report_files(ref_out)
    assert "leaderboard.md" in want
    kills = 0
    pages = ("leaderboard.md", "index.html", "examples.html", "results.json")
    for delay in (0.5, 1.0, 2.0, 3.0, 4.0):
        proc = cli("report", "--home", str(ws), "--out", str(out))
        t0 = time.monotonic()
        if kill_when(proc, lambda t=t0, d=delay: time.monotonic() - t >= d):
            kills += 1
            have = report_files(out) if out.exists() else {}
            # between the kill and the rerun, a page is absent or whole (written to a temp file, then renamed)
            assert all(have[p] == want[p] for p in pages if p in have), [p for p in pages if have.get(p) != want[p]]
    finish(cli("report", "--home", str(ws), "--out", str(out)))
    assert report_files(out) == want
    assert not [p for p in out.rglob("*") if p.suffix in (".tmp", ".part")]
    print(f"report: {kills} kills at 0.5-4 s, then a rerun: {len(want)} files identical to an uninterrupted report")
