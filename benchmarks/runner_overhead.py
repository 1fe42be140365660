"""What the run harness costs per request, against the bare HTTP loop it is built on: client CPU and wall time.

Contenders, each sending the same N requests (~2 KB windows of real paper text, the abstract task) to a local
OpenAI-compatible server (`testing.fake_server`) that runs in its own process:
  * raw aiohttp — the floor: POST each prompt (pre-rendered) under a semaphore, parse the JSON, nothing else;
  * openai SDK — `AsyncOpenAI` with the same semaphore;
  * runner cold — `run_round` on a fresh workspace: render, cache look-up and write, prompt memo, retries and
    the adaptive limiter, records appended and flushed;
  * runner replay — `run_round` with every answer in the response cache (records deleted): no request at all;
  * runner cold (base) — with `--base-src DIR`: the same cold run on another tree (before/after in one run).
Every measurement is a fresh child process; CPU is the child's own `process_time` over the request phase (the
server's CPU is never counted; it is printed beside, read from /proc). Contenders are interleaved, their order
rotated each repetition, and repeated (median of >= 5, more when the load makes the ratios noisy: up to
`--max-repeats` while a ratio's spread exceeds `--noise`). The 1-minute load average is printed with every
figure: the machine has 2 cores shared with other engineers, and the server needs one of them.

A ratio that contradicts itself is refused, not printed: the runner (or the SDK) doing the same HTTP exchange as
raw aiohttp plus more work cannot cost less CPU per request; a replay (no request) cannot cost more than a cold
run. Such a figure means the measurement is invalid (load, the server or other jobs taking the client's core).

    python benchmarks/runner_overhead.py [--quick] [--no-sdk] [--concurrency 64,16,1] [--base-src DIR]

Ratios: CPU raw/this = raw CPU-s per request / this contender's (> 1: cheaper than raw); wall this/raw =
throughput relative to raw's. Targets (issue 27 item 4): runner cold CPU raw/this >= 0.65 at concurrency 16 and
64. Issue 5: replays >= 10,000 samples/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL = "fake-model"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _corpus() -> Path:
    """ACADEMICEVAL_CORPUS, else the first `shared/corpus` beside the checkout or an ancestor (worktrees)."""
    if os.environ.get("ACADEMICEVAL_CORPUS"):
        return Path(os.environ["ACADEMICEVAL_CORPUS"])
    for d in REPO.parents:
        if (d / "shared" / "corpus").is_dir():
            return d / "shared" / "corpus"
    return REPO.parent / "shared" / "corpus"


CORPUS = _corpus()


def build_round(out: Path, n: int, window_chars: int = 1400) -> Path:
    """Abstract-task samples whose body is a ~1.4 KB window of a real paper (prompts ~2 KB with the template), with
    the templates copied into the round as `rounds build` does (runs render with the round's own templates)."""
    from academiceval.rounds.prompts import DEFAULT_TEMPLATES
    from academiceval.store.artifacts import TEMPLATES
    from academiceval.store.models import Sample
    from academiceval.testing.sample_round import load_unarxive_papers, write_round

    shutil.copytree(DEFAULT_TEMPLATES, out / TEMPLATES)  # listed in the manifest with the data files

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
    """The fake server in its own process, so its CPU is not charged to the client."""

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

    def cpu_s(self) -> float:
        """The server process's CPU seconds so far (user + system, from /proc)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / CLK_TCK
        except (OSError, IndexError, ValueError):
            return float("nan")

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


# ---- one measurement, in a child process --------------------------------------------------------------------
def child(a: argparse.Namespace) -> dict[str, float]:
    if a.child in ("raw", "sdk"):
        prompts = json.loads(Path(a.prompts).read_text())[: a.n]
        fn = raw_aiohttp if a.child == "raw" else openai_sdk
        wall, cpu = asyncio.run(fn(a.url, prompts, a.conc))
        return {"wall_s": wall, "cpu_s": cpu, "n": len(prompts), "whole_cpu_s": cpu}
    from academiceval.runs.config import RunConfig
    from academiceval.runs.runner import run_round

    home = Path(a.home)
    if a.child == "runner":
        shutil.rmtree(home, ignore_errors=True)  # cold: no cache, no records
    else:  # replay: the cache of an earlier run, its records deleted
        for p in (home / "runs").glob("*/*/*.jsonl"):
            p.unlink()
    cfg = RunConfig(model=f"openai/{MODEL}", base_url=a.url, max_connections=a.conc, limit=a.n)
    c0 = time.process_time()
    s = run_round(home, Path(a.round), cfg)
    whole = time.process_time() - c0
    done, cached = s.total("done"), s.total("cached")
    if done != a.n or (a.child == "replay" and cached != a.n):
        raise SystemExit(f"{a.child}: {done} answers ({cached} from the cache) for {a.n} samples")
    return {"wall_s": s.elapsed_s, "cpu_s": s.cpu_s, "n": done, "whole_cpu_s": whole}


# ---- the parent: interleaving, repeats, ratios ---------------------------------------------------------------
@dataclass
class Contender:
    key: str
    label: str
    kind: str  # raw | sdk | runner | replay
    src: str  # PYTHONPATH of the child
    runs: list[dict[str, float]] = field(default_factory=list)

    def per_req(self, what: str) -> list[float]:
        return [r[what] / r["n"] for r in self.runs]


def measure(c: Contender, *, url: str, round_dir: Path, prompts: Path, n: int, conc: int, home: Path, srv: Server):
    env = dict(os.environ, PYTHONPATH=c.src, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, __file__, "--child", c.kind, "--url", url, "--round", str(round_dir)]
    cmd += ["--prompts", str(prompts), "--n", str(n), "--conc", str(conc), "--home", str(home)]
    load = os.getloadavg()[0]
    s0 = srv.cpu_s()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{c.label} failed:\n{out.stderr[-2000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    got["server_cpu_s"] = srv.cpu_s() - s0
    got["load"] = (load + os.getloadavg()[0]) / 2
    c.runs.append(got)


def spread(values: list[float]) -> float:
    """(max - min) / median: how far apart the repetitions are."""
    m = statistics.median(values)
    return (max(values) - min(values)) / m if m else float("inf")


def paired_ratios(base: Contender, other: Contender) -> list[float]:
    """raw CPU per request / other's, repetition by repetition (the two were measured back to back)."""
    return [b / o for b, o in zip(base.per_req("cpu_s"), other.per_req("cpu_s"), strict=True)]


def fmt_range(values: list[float], scale: float = 1.0, spec: str = ",.0f") -> str:
    med, lo, hi = (format(v * scale, spec) for v in (statistics.median(values), min(values), max(values)))
    return f"{med} [{lo}-{hi}]"


def contradiction(kind: str, raw_over_this: float, this_over_cold: float | None, label: str = "") -> str:
    """Why a contender's figure cannot be right, or "". The runner and the SDK do raw aiohttp's HTTP exchange and
    more, so they cannot cost less CPU per request than raw (`raw_over_this` >= 1); a replay sends nothing, so it
    may cost less than raw, but not more than the cold run it replays (`this_over_cold` >= 1)."""
    label = label or kind
    if kind in ("runner", "sdk") and raw_over_this >= 1.0:
        return (
            f"INVALID: {label} would cost less CPU per request than raw aiohttp ({raw_over_this:.2f}x) although it "
            "does the same HTTP exchange and more: the load (other jobs, or the server sharing the 2 cores) took "
            "the client's core during one of them; rerun on a quieter machine or with more --repeats"
        )
    if kind == "replay" and this_over_cold is not None and this_over_cold >= 1.0:
        return (
            f"INVALID: {label} (no request) measured as dearer than the cold run it replays "
            f"({this_over_cold:.2f}x); the measurement is disturbed"
        )
    return ""


def report(conc: int, contenders: list[Contender], raw: Contender) -> dict[str, str]:
    """Print one concurrency's table; return each runner contender's CPU ratio (or INVALID) for the summary."""
    loads = [r["load"] for c in contenders for r in c.runs]
    server = [r["server_cpu_s"] / r["n"] for c in contenders if c.kind in ("raw", "runner") for r in c.runs]
    reps = len(raw.runs)
    print(
        f"\nconcurrency {conc}: {reps} repetitions; load (1-min avg) median {statistics.median(loads):.1f}, "
        f"range {min(loads):.1f}-{max(loads):.1f}; server CPU {statistics.median(server) * 1e6:,.0f} µs/req"
    )
    head = (
        f"  {'contender':<20} {'CPU µs/req [min-max]':>22} {'wall req/s [min-max]':>24}"
        f" {'CPU raw/this [min-max]':>24} {'wall this/raw':>13}"
    )
    print(head)
    print("  " + "-" * (len(head) - 2))
    raw_rate = statistics.median([1 / x for x in raw.per_req("wall_s")])
    cold = next((c for c in contenders if c.key == "runner"), None)
    out: dict[str, str] = {}
    for c in contenders:
        cpu = c.per_req("cpu_s")
        rate = [1 / x for x in c.per_req("wall_s")]
        ratios = paired_ratios(raw, c)
        r_med = statistics.median(ratios)
        ratio = f"{r_med:.2f} [{min(ratios):.2f}-{max(ratios):.2f}]" if c is not raw else "1.00"
        cold_cpu = statistics.median(cold.per_req("cpu_s")) if cold is not None else None
        why = contradiction(c.kind, r_med, statistics.median(cpu) / cold_cpu if cold_cpu else None, c.label)
        if why:
            ratio = "INVALID"
        wall_ratio = statistics.median(rate) / raw_rate
        print(
            f"  {c.label:<20} {fmt_range(cpu, 1e6):>22} {fmt_range(rate):>24} {ratio:>24} {wall_ratio:>12.2f}x"
            + (f"  spread {spread(ratios):.0%}" if c is not raw else "")
        )
        if why:
            print(f"    {why}")
        if c.kind == "runner":
            setup = [(r["whole_cpu_s"] - r["cpu_s"]) * 1e3 for r in c.runs]
            print(
                f"    {'':<18} (+ {statistics.median(setup):,.0f} ms CPU per run outside the request phase: "
                "loading the round, validating the server, run.json and the lock)"
            )
        if c.kind in ("runner", "replay"):
            out[c.label] = "INVALID" if why else f"{r_med:.2f} [{min(ratios):.2f}-{max(ratios):.2f}]"
    replay = next((c for c in contenders if c.kind == "replay"), None)
    if replay is not None:
        rate = statistics.median([1 / x for x in replay.per_req("wall_s")])
        cpu = statistics.median(replay.per_req("cpu_s"))
        print(
            f"  replay: {rate:,.0f} samples/s, {cpu * 1e6:.0f} CPU µs/sample (= {1 / cpu:,.0f}/s per busy core); "
            f"issue 5 target >= 10,000/s: {'met' if rate >= 10_000 else 'NOT met'}"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="600 requests per measurement instead of 2,000")
    ap.add_argument("--requests", type=int, default=None, help="requests (samples) per contender and repetition")
    ap.add_argument("--concurrency", default="64,16,1", help="comma-separated")
    ap.add_argument("--latency", type=float, default=0.0, help="server latency in seconds")
    ap.add_argument("--repeats", type=int, default=5, help="repetitions at least (median reported)")
    ap.add_argument("--max-repeats", type=int, default=9, help="repeat up to this many while ratios are noisy")
    ap.add_argument("--noise", type=float, default=0.15, help="a ratio spread ((max-min)/median) that asks for more")
    ap.add_argument("--no-sdk", action="store_true", help="leave out the openai SDK (the slowest contender)")
    ap.add_argument("--base-src", help="another tree's src directory: its runner is measured as a contender too")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    for hidden in ("--url", "--round", "--prompts", "--home"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--conc", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a)))
        return
    if a.repeats < 5:
        raise SystemExit("--repeats must be at least 5 (median of 5 or more)")
    n = a.requests or (600 if a.quick else 2000)
    concs = [int(x) for x in a.concurrency.split(",")]
    mine = str(REPO / "src")
    tmp = Path(tempfile.mkdtemp(prefix="runner-bench-"))
    try:
        round_dir = build_round(tmp / "round", n)
        prompts = prompts_of(round_dir, n)
        (tmp / "prompts.json").write_text(json.dumps(prompts))
        size = sum(len(p.encode()) for p in prompts) / len(prompts)
        srv = Server(a.latency)
        load = os.getloadavg()
        print(
            f"# runner overhead: {n} requests per contender and repetition (real-text prompts of "
            f"{size / 1024:.1f} KB); server latency {a.latency * 1000:.0f} ms, in its own process; "
            f"{os.cpu_count()} CPUs shared; client CPU = the child process's own, request phase; "
            f"load at start {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
        )
        summary: dict[int, dict[str, str]] = {}
        try:
            for conc in concs:
                contenders = [Contender("raw", "raw aiohttp", "raw", mine)]
                if not a.no_sdk:
                    contenders.append(Contender("sdk", "openai SDK", "sdk", mine))
                contenders.append(Contender("runner", "runner cold", "runner", mine))
                if a.base_src:
                    base = str(Path(a.base_src).resolve())
                    contenders.append(Contender("base", "runner cold (base)", "runner", base))
                contenders.append(Contender("replay", "runner replay", "replay", mine))
                homes = {c.key: tmp / f"home-{conc}-{c.key}" for c in contenders}
                warm = Contender("warm", "", "runner", mine)  # fills the replay's cache (not measured)
                kw = dict(url=srv.url, round_dir=round_dir, prompts=tmp / "prompts.json", n=n, conc=conc, srv=srv)
                measure(warm, home=homes["replay"], **kw)
                rep = 0
                while True:
                    order = contenders[rep % len(contenders) :] + contenders[: rep % len(contenders)]
                    for c in order:
                        measure(c, home=homes[c.key], **kw)
                    rep += 1
                    noisy = max(spread(paired_ratios(contenders[0], c)) for c in contenders if c.kind == "runner")
                    if rep >= a.repeats and (noisy <= a.noise or rep >= a.max_repeats):
                        break
                summary[conc] = report(conc, contenders, contenders[0])
        finally:
            srv.stop()
        load = os.getloadavg()
        print(
            "\n# runner CPU per request vs raw aiohttp (raw CPU-s per request / ours; > 1: we are cheaper); "
            f"load now {load[0]:.1f}"
        )
        for conc, ratios in summary.items():
            print(f"  concurrency {conc:>3}: " + "; ".join(f"{k} {v}" for k, v in ratios.items()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
