"""Many endpoints in one run (issue 13 item 4): three local fault-injecting OpenAI-compatible servers of different
latency, each measured alone, then all three in one run, then all three with one killed (SIGKILL) midway.

Each server is `python -m academiceval.testing.fake_server` in its own process on 127.0.0.1 (loopback only), with
transient faults on a few prompts (500s: the first attempt fails, a retry succeeds).
The run is `run_round` over a synthetic round of distinct prompts with the response cache off, so every sample
is one request (plus retries); `--max-connections` is per endpoint.

Printed: requests/s of each server alone, of the three together, and the ratio together / sum-of-alone (target
≥ 0.9); then for the kill run: requests per endpoint, failures, records, duplicates (target 0), losses (target 0).

    python benchmarks/runner_endpoints.py            # 400 samples per run
    python benchmarks/runner_endpoints.py --quick    # 120 samples per run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from academiceval.models.endpoints import EndpointPool  # noqa: E402
from academiceval.models.retry import RetryPolicy  # noqa: E402
from academiceval.runs.config import RunConfig  # noqa: E402
from academiceval.runs.runner import run_round  # noqa: E402
from academiceval.store.artifacts import read_run_records  # noqa: E402
from academiceval.store.models import Sample  # noqa: E402
from academiceval.testing.sample_round import write_round  # noqa: E402

MODEL = "fake-model"
SERVERS = (("fast", 0.1), ("mid", 0.2), ("slow", 0.4))  # name, latency in seconds
# 500s on the first attempt of 2 % of prompts (retried). No 429s here: one 429 halves an endpoint's AIMD window,
# and 500s (which pause its growth) then keep it small for the rest of the run, so throughput would measure when
# the 429s happened to land rather than the dispatch (per-endpoint 429 handling is in tests/runs/test_endpoints.py)
FAULTS = ("500=0.02",)
WORDS = ("model data graph paper learning network method result training system language vision").split()  # noqa: SIM905


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "academiceval.testing.fake_server", "--port", str(port), "--latency", str(latency)]
    for f in FAULTS:
        cmd += ["--fault", f]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=1) as r:
                json.load(r)
            return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"fake server on port {port} did not start")


def make_round(root: Path, n: int, salt: str) -> Path:
    """A round of `n` distinct prompts; each measured run gets its own `salt`, so every run meets the servers'
    faults afresh (a fake server fails only the first attempts of a prompt it has not seen)."""
    samples = []
    for i in range(n):
        words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(60))
        samples.append(
            Sample(
                sample_id=f"title/zero-shot/bench.{i:05d}",
                round="bench-endpoints",
                task="title",
                setting="zero-shot",
                split="test",
                arxiv_id=f"bench.{i:05d}",
                paper_id=f"bench:{i}",
                published=date(2024, 1, 1 + i % 28),
                fields={"abstract": f"Abstract {salt} {i}: {words}", "body": f"Body of paper {i}. {words} " * 4},
                label=f"Title {i}",
            )
        )
    name = f"bench-{salt}"
    for smp in samples:
        smp.round = name
    return write_round(root / "rounds" / name, name, {"title-zeroshot": samples})


def run(ws: Path, name: str, conns: int, n: int, *, urls: list[str], progress=None, pool=False):
    rnd = make_round(ws.parent, n, name)
    config = RunConfig(
        model=f"openai/{MODEL}",
        endpoints=urls,
        max_connections=conns,
        use_cache=False,
        run_name=name,
        limit=n,
        timeout=10,
    )
    policy = RetryPolicy(max_attempts=8, initial_s=0.05, max_backoff_s=1.0)
    backend = EndpointPool(MODEL, base_urls=urls, max_connections=conns, timeout=10) if pool else None
    try:
        s = run_round(ws, rnd, config, retry_policy=policy, progress=progress, backend=backend)
    finally:
        if backend is not None:
            asyncio.run(backend.aclose())
    done = s.finished_now
    return s, done / s.elapsed_s if s.elapsed_s else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="120 samples per run instead of 400")
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--max-connections", type=int, default=8, help="per endpoint")
    a = ap.parse_args()
    n = a.samples or (120 if a.quick else 400)
    conns = a.max_connections
    procs: dict[str, subprocess.Popen] = {}
    urls: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-endpoints-") as tmp:
        ws = Path(tmp) / "ws"
        try:
            for name, latency in SERVERS:
                procs[name], urls[name] = start_server(latency)
            run(ws, "warm-up", conns, min(n, 32), urls=list(urls.values()))  # imports, templates, sockets
            alone: dict[str, float] = {}
            plain: dict[str, float] = {}
            for name, latency in SERVERS:
                # the strict baseline: the same dispatcher with only this endpoint (same workers-per-slot shape)
                s, thr = run(ws, f"alone-{name}", conns, n, urls=[urls[name]], pool=True)
                alone[name] = thr
                # for reference: today's single --base-url path (workers = slots, so a retry's back-off idles a slot)
                _, thr1 = run(ws, f"plain-{name}", conns, n, urls=[urls[name]])
                plain[name] = thr1
                print(
                    f"alone {name:4s} (latency {latency * 1000:.0f} ms, {conns} connections, ceiling "
                    f"{conns / latency:.0f}/s): {thr:7.1f} requests/s "
                    f"({s.finished_now} samples in {s.elapsed_s:.2f} s, "
                    f"errors {s.total('errors')}); single --base-url path {thr1:.1f} requests/s"
                )
            # 3n samples: about as long as an alone run, so start-up and the last requests weigh alike
            s, together = run(ws, "together", conns, 3 * n, urls=list(urls.values()))
            per = {u.rsplit(":", 1)[1]: st["answered"] for u, st in (s.endpoints or {}).items()}
            total_alone = sum(alone.values())
            ratio = together / total_alone
            print(
                f"together (3 endpoints): {together:7.1f} requests/s, {s.finished_now} samples in {s.elapsed_s:.2f} s, "
                f"errors {s.total('errors')}, answered per endpoint {per}, "
                f"client CPU {s.cpu_s / s.elapsed_s:.0%} of a core"
            )
            print(f"throughput ratio together / sum alone = {together:.1f} / {total_alone:.1f} = {ratio:.3f}")
            print(
                f"  (against the single --base-url runs: {together:.1f} / {sum(plain.values()):.1f} = "
                f"{together / sum(plain.values()):.3f}; against the latency ceilings: "
                f"{together:.1f} / {sum(conns / lat for _, lat in SERVERS):.0f})"
            )

            victim = procs["mid"]
            fired = threading.Event()

            def kill_midway(done: int, total: int) -> None:
                if done >= total // 3 and not fired.is_set():
                    fired.set()
                    victim.send_signal(signal.SIGKILL)

            s, thr = run(ws, "kill-one", conns, n, urls=list(urls.values()), progress=kill_midway)
            recs = read_run_records(s.run_dir)
            lines = [
                json.loads(line)
                for p in s.run_dir.glob("*.jsonl")
                if p.name != "scores.jsonl"
                for line in p.read_text().splitlines()
                if line.strip()
            ]
            ids = Counter(r["sample_id"] for r in lines)
            duplicates = sum(c - 1 for c in ids.values() if c > 1)
            losses = n - len(ids)
            failures = sum(1 for r in recs.values() if r.error)
            by_endpoint = Counter(r["endpoint"] for r in lines)
            print(f"kill one server (SIGKILL 'mid' after {n // 3} samples): {thr:.1f} requests/s")
            for name, url in urls.items():
                st = (s.endpoints or {}).get(url, {})
                print(
                    f"  {name:4s} {url}: requests {st.get('requests', 0)}, answered {st.get('answered', 0)}, "
                    f"failed attempts {st.get('failures', 0)}, taken out {st.get('taken_out', 0)}x, "
                    f"records naming it {by_endpoint.get(url, 0)}"
                )
            print(
                f"runner_endpoints: ratio {ratio:.3f}, kill_one: records {len(lines)}, failures {failures}, "
                f"duplicates {duplicates}, losses {losses}"
            )
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.terminate()
                    p.wait(timeout=10)


if __name__ == "__main__":
    main()
