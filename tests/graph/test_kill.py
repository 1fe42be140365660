"""The crawl over real HTTP (`mirror serve` in a thread): fault storms and SIGKILL change nothing in the graph."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from graph_data import CRAWL_UNTIL

from academiceval.graph import collect
from academiceval.graph.queries import snapshot
from academiceval.sources.client import ArxivClient
from academiceval.sources.server import FaultConfig, serve_in_thread
from academiceval.store import Workspace

N_AUTHORS = 80


@pytest.fixture(scope="module")
def reference(tmp_path_factory, mirror, seeds):
    """The uninterrupted crawl through the in-process mirror."""
    ws = Workspace(tmp_path_factory.mktemp("reference") / "ws")
    collect(ws, mirror, seeds, max_authors=N_AUTHORS, until=CRAWL_UNTIL)
    snap = snapshot(ws)
    ws.close()
    return snap


def test_fault_injecting_server_yields_the_same_graph(listings, mirror, seeds, reference, tmp_path) -> None:
    faults = FaultConfig(rate_429=0.10, rate_500=0.05, retry_after=0.01, seed=11)
    with serve_in_thread(listings, faults=faults) as server:
        client = ArxivClient(server.url, min_interval=0.0, backoff_base=0.01, backoff_max=0.05, max_retries=8, seed=1)
        ws = Workspace(tmp_path / "ws")
        rep = collect(ws, client, seeds, max_authors=N_AUTHORS, until=CRAWL_UNTIL)
        stats = server.stats()
    assert rep.stopped_early is None and rep.failed == 0
    assert snapshot(ws) == reference
    assert stats["faults"]["429"] > 3 and stats["faults"]["500"] > 1  # the storm really happened
    assert rep.api_calls == stats["api_requests"] > N_AUTHORS  # retries are counted as calls


def _cli(home: Path, url: str, seeds: list[str]) -> list[str]:
    args = [sys.executable, "-m", "academiceval.cli.main", "collect", "--api-url", url, "--min-interval", "0"]
    args += ["--max-authors", str(N_AUTHORS), "--until", CRAWL_UNTIL.isoformat(), "--home", str(home)]
    for s in seeds:
        args += ["--seed-author", s]
    return args


def kill_and_resume(home: Path, server, seeds: list[str], kills: int, seed: int, total_requests: int) -> int:
    """Run `academiceval collect` in a subprocess, SIGKILL it at `kills` random moments, then let it finish.

    A moment is drawn (seeded) as a number of served requests plus a random delay of up to 40 ms, so kills land
    anywhere: during a fetch, between fetch and commit, inside the transaction. Returns how many kills landed.
    """
    rng = random.Random(seed)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    landed = 0
    for _ in range(kills):
        base = server.stats()["api_requests"]
        target = base + rng.randint(1, max(2, total_requests // (kills + 1)))
        proc = subprocess.Popen(
            _cli(home, server.url, seeds), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 120
        while server.stats()["api_requests"] < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.04))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            landed += 1
        proc.wait(timeout=30)
    done = subprocess.run(_cli(home, server.url, seeds), env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "co-author edges" in done.stdout  # the summary table
    return landed


def test_sigkill_at_random_moments_then_resume_is_identical(listings, mirror, seeds, reference, tmp_path) -> None:
    home = tmp_path / "killed"
    with serve_in_thread(listings) as server:
        landed = kill_and_resume(home, server, seeds, kills=3, seed=2026, total_requests=N_AUTHORS)
    assert landed >= 2
    ws = Workspace(home)
    assert snapshot(ws) == reference
    assert ws.db.execute("SELECT COUNT(*) FROM graph_author WHERE in_graph=1").fetchone()[0] > 0  # refined at the end
