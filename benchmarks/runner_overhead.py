"""How much the run harness costs per request, against a local OpenAI-compatible server.

Measures `run_round` (prompt rendering, response cache, retries/limiter, per-sample JSONL records) at 0 ms and
50 ms server latency and concurrency 1, 16, 64, and compares it with two baselines measured in the same run on
the same prompts: a bare aiohttp loop (the floor: HTTP only, no harness) and the openai SDK. Also a cached
replay (records deleted, every answer from the cache). The server runs in a separate process so the CPU
seconds reported are the harness's own. Prompts are ~2 KB windows of real paper text (unarXive sample).

Targets (issue 5): >= 1,000 requests/s at concurrency 64 with 0 ms latency; cached replays >= 10,000 samples/s.

    python benchmarks/runner_overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import date
from pathlib import Path

from academiceval.runs.config import RunConfig

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus"))
MODEL = "fake-model"


def build_round(out: Path, n: int, window_chars: int = 1400) -> Path:
    """Abstract-task samples whose body is a ~1.4 KB window of a real paper (prompts ~2 KB with the template)."""
    from academiceval.rounds.models import Sample
    from academiceval.testing.sample_round import load_unarxive_papers, write_round

    papers = load_unarxive_papers(CORPUS, body_chars=400_000)
    rows: list[Sample] = []
    k = 0
    while len(rows) < n:
        grew = False
        for p in papers:
            start = k * window_chars
            window = p["body"][start : start + window_chars]
            if len(window) < window_chars // 2:
                continue
            grew = True
            rows.append(
                Sample(
                    sample_id=f"abstract/zero-shot/{p['arxiv_id']}#w{k}",
                    round="bench",
                    task="abstract",
                    setting="zero-shot",
                    split="test",
                    arxiv_id=p["arxiv_id"],
                    paper_id=f"unarxive:{p['arxiv_id']}",
                    published=p["published"] or date(2022, 12, 1),
                    fields={"title": p["title"], "body": window},
                    label=p["abstract"],
                )
            )
            if len(rows) >= n:
                break
        if not grew:
            raise SystemExit(f"the corpus yields only {len(rows)} windows; lower the sample count")
        k += 1
    return write_round(out, "bench", {"abstract-zs": rows})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The fake server in its own process, so its CPU is not charged to the harness."""

    def __init__(self, latency: float) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        cmd = [sys.executable, "-m", "academiceval.testing.fake_server", "--port", str(self.port)]
        self.proc = subprocess.Popen([*cmd, "--latency", str(latency)], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise SystemExit("fake server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def prompts_of(round_dir: Path, n: int) -> list[str]:
    from academiceval.rounds.prompts import render_prompt
    from academiceval.store.artifacts import load_round

    return [render_prompt(s) for s in load_round(round_dir).distinct_samples()[:n]]


async def raw_aiohttp(url: str, prompts: list[str], conc: int) -> tuple[float, float]:
    """The floor: POST each prompt with a semaphore, parse the JSON, nothing else."""
    import aiohttp

    sem = asyncio.Semaphore(conc)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as session:

        async def one(p: str) -> None:
            async with sem:
                body = {"model": MODEL, "messages": [{"role": "user", "content": p}], "max_tokens": 512}
                async with session.post(f"{url}/chat/completions", json=body) as r:
                    json.loads(await r.read())["choices"][0]["message"]["content"]

        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(p) for p in prompts))
        return time.perf_counter() - t0, time.process_time() - c0


async def openai_sdk(url: str, prompts: list[str], conc: int) -> tuple[float, float]:
    from openai import AsyncOpenAI

    sem = asyncio.Semaphore(conc)
    client = AsyncOpenAI(base_url=url, api_key="unused", max_retries=0)

    async def one(p: str) -> None:
        async with sem:
            r = await client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": p}], max_tokens=512
            )
            assert r.choices[0].message.content

    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(p) for p in prompts))
    out = time.perf_counter() - t0, time.process_time() - c0
    await client.close()
    return out


def harness(round_dir: Path, home: Path, url: str, n: int, conc: int) -> tuple[float, float, int]:
    from academiceval.runs.runner import run_round

    s = run_round(home, round_dir, RunConfig(model=f"openai/{MODEL}", base_url=url, max_connections=conc, limit=n))
    return s.elapsed_s, s.cpu_s, s.total("cached")


def cached_replay(round_dir: Path, home: Path, url: str, n: int, repeat: int = 3) -> tuple[int, float, float]:
    """Delete the records of a finished run and run it again: every answer comes from the response cache.
    Best of `repeat` (the machine is shared)."""
    run_dir = next((home / "runs" / "bench").iterdir())
    best = (n, float("inf"), float("inf"))
    for _ in range(repeat):
        for p in run_dir.glob("*.jsonl"):
            p.unlink()
        wall, cpu, cached = harness(round_dir, home, url, n, 64)
        if cached != n:
            raise SystemExit(f"cached replay answered only {cached} of {n} samples from the cache")
        best = min(best, (n, wall, cpu), key=lambda t: t[1])
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer requests (about a minute)")
    ap.add_argument("--no-sdk", action="store_true", help="skip the openai SDK baseline")
    args = ap.parse_args()
    n_fast = 600 if args.quick else 2000
    per_conn_slow = 10 if args.quick else 25  # at 50 ms: requests per connection (~0.5-1.3 s per cell)
    tmp = Path(tempfile.mkdtemp(prefix="runner-bench-"))
    try:
        round_dir = build_round(tmp / "round", n_fast)
        all_prompts = prompts_of(round_dir, n_fast)
        size = sum(len(p.encode()) for p in all_prompts) / len(all_prompts)
        print(
            f"# runner overhead: {n_fast} real-text prompts of {size / 1024:.1f} KB on average; "
            f"server in its own process; {os.cpu_count()} CPUs; load avg {os.getloadavg()[0]:.1f}"
        )
        header = (
            f"{'latency':>7} {'conc':>4} {'n':>5} | {'harness/s':>9} {'cpu ms/req':>10} | {'raw aiohttp/s':>13}"
            f" {'cpu ms/req':>10} | {'harness/raw':>11} | {'openai SDK/s':>12} {'harness/SDK':>11}"
        )
        print(header)
        print("-" * len(header))
        cell = 0
        for latency in (0.0, 0.05):
            srv = Server(latency)
            try:
                for conc in (1, 16, 64):
                    n = n_fast if latency == 0 else min(n_fast, conc * per_conn_slow)
                    if latency == 0 and conc == 1:
                        n = min(n, 300 if args.quick else 600)
                    prompts = all_prompts[:n]
                    cell += 1
                    wall, cpu, _ = harness(round_dir, tmp / f"ws{cell}", srv.url, n, conc)
                    if latency == 0 and conc == 64:
                        replay = cached_replay(round_dir, tmp / f"ws{cell}", srv.url, n)
                    r_wall, r_cpu = asyncio.run(raw_aiohttp(srv.url, prompts, conc))
                    sdk = ""
                    if not args.no_sdk and latency == 0 and conc in (16, 64):
                        m = min(n, 300 if args.quick else 600)
                        s_wall, _ = asyncio.run(openai_sdk(srv.url, all_prompts[:m], conc))
                        sdk = f"{m / s_wall:>12,.0f} {(n / wall) / (m / s_wall):>10.1f}x"
                    print(
                        f"{latency * 1000:>5.0f}ms {conc:>4} {n:>5} | {n / wall:>9,.0f} {1000 * cpu / n:>10.3f} | "
                        f"{n / r_wall:>13,.0f} {1000 * r_cpu / n:>10.3f} | {(n / wall) / (n / r_wall):>10.2f}x | {sdk}"
                    )
            finally:
                srv.stop()
        n, wall, cpu = replay
        print()
        print(
            f"cached replay (records deleted, answers from the cache, concurrency 64): {n} samples in {wall:.3f} s = "
            f"{n / wall:,.0f} samples/s, {1000 * cpu / n:.3f} CPU ms/sample (= {n / cpu:,.0f}/s per busy core); "
            f"target >= 10,000/s: {'met' if n / wall >= 10_000 else 'NOT met'}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
