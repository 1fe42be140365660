"""`mirror serve` under 1,000 concurrent loopback connections: peak RSS, errors, and how fast SIGTERM ends it
(issue 26 item 5; before the bounds, 1,000 connections took the server from 474 MB to 8.6 GB and SIGTERM was
ignored).

Each round starts `academiceval mirror serve` as a process over a disk index, opens `--connections` connections at
once (asyncio, raw sockets; each sends one query — a month window over astro-ph, page of 100 — and reads the whole
answer; a `503` with Retry-After is retried after it, as arXiv clients do), then opens the same number again and
sends SIGTERM while they are in flight. Printed per round and as medians over `--rounds` (≥ 5): peak RSS of the
server (VmHWM) at start and after the burst, answers (200 / 503 first / errors), burst wall time, SIGTERM → exit.
There is no contender to interleave (the unbounded server is not run again: it took 8.6 GB); the load average
is printed with every round.

    python benchmarks/mirror_serve_load.py --records 20000            # generates a snapshot and its index
    python benchmarks/mirror_serve_load.py --index I.sqlite --mirror DIR   # an index built before
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERY = (
    "search_query=submittedDate:[202001010000+TO+202001312359]+AND+cat:astro-ph&max_results=100&sortBy=submittedDate"
)


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f}"


def _vm(pid: int, key: str) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) / 1024 if m else float("nan")


async def _one(port: int, tries: int = 8) -> str:
    """'ok', 'ok-after-503' or 'error:<what>'."""
    refused = False
    for attempt in range(tries):
        try:
            r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 30)
            w.write(f"GET /api/query?{QUERY} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            await w.drain()
            data = await asyncio.wait_for(r.read(), 60)
            w.close()
        except (OSError, TimeoutError) as e:
            return f"error:{type(e).__name__}"
        status = data[9:12]
        if status == b"200" and data.rstrip().endswith(b"</feed>"):
            return "ok-after-503" if refused else "ok"
        if status == b"503":
            refused = True
            m = re.search(rb"Retry-After: ([\d.]+)", data)
            await asyncio.sleep((float(m.group(1)) if m else 1.0) * random.uniform(0.5, 1.5) * 2**attempt)
            continue
        return f"error:status {status.decode(errors='replace')}"
    return "error:503 after retries"


async def burst(port: int, n: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for res in await asyncio.gather(*(_one(port) for _ in range(n))):
        key = res if not res.startswith("error") else "error"
        out[key] = out.get(key, 0) + 1
        if res.startswith("error"):
            out[res] = out.get(res, 0) + 1
    return out


def start(mirror: Path, home: Path) -> tuple[subprocess.Popen, int]:
    cmd = [sys.executable, "-m", "academiceval.cli.main", "mirror", "serve", str(mirror), "--port", "0",
           "--home", str(home)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for _ in range(200):
        line = proc.stdout.readline()  # type: ignore[union-attr]
        m = re.search(r"127\.0\.0\.1:(\d+)/api/query", line)
        if m:
            return proc, int(m.group(1))
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("mirror serve did not start")


def round_(mirror: Path, home: Path, n: int) -> dict[str, float]:
    proc, port = start(mirror, home)
    try:
        rss0 = _vm(proc.pid, "VmRSS")
        t0 = time.perf_counter()
        res = asyncio.run(burst(port, n))
        wall = time.perf_counter() - t0
        hwm = _vm(proc.pid, "VmHWM")

        async def burst_then_term() -> float:
            task = asyncio.ensure_future(burst(port, n))
            await asyncio.sleep(0.3)  # the connections are open and being answered
            t = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            while proc.poll() is None:
                await asyncio.sleep(0.005)
            took = time.perf_counter() - t
            await task
            return took

        term = asyncio.run(burst_then_term())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return {"rss_start_mb": rss0, "peak_rss_mb": hwm, "wall_s": wall, "sigterm_s": term,
            "ok": res.get("ok", 0), "ok_after_503": res.get("ok-after-503", 0), "errors": res.get("error", 0),
            "exit": proc.returncode, **{k: v for k, v in res.items() if k.startswith("error:")}}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--records", type=int, default=20000, help="generate a snapshot of N records (no --mirror)")
    ap.add_argument("--mirror", type=Path, help="a mirror directory whose index is --index")
    ap.add_argument("--index", type=Path, help="its disk index (copied into a temporary workspace)")
    args = ap.parse_args()
    if args.rounds < 5:
        raise SystemExit("--rounds must be at least 5")
    work = Path(tempfile.mkdtemp(prefix="mirror-serve-load-"))
    try:
        home = work / "home"
        if args.mirror is not None:
            from academiceval.sources.mirror.disk import default_index_path

            mirror = args.mirror.resolve()
            target = default_index_path(mirror, home / "mirror-index")
            target.parent.mkdir(parents=True)
            os.link(args.index, target) if args.index else None
        else:
            sys.path.insert(0, str(HERE))
            from mirror_scale import generate, material

            mirror = work / "mirror"
            mirror.mkdir()
            generate(mirror / "arxiv-metadata-oai-snapshot.json", args.records, material())
        subprocess.run([sys.executable, "-m", "academiceval.cli.main", "mirror", "index", str(mirror), "--home",
                        str(home), "--index-only"], check=True, capture_output=True)  # fmt: skip
        rows = []
        for r in range(args.rounds):
            before = load()
            row = round_(mirror, home, args.connections)
            rows.append(row)
            print(
                f"round {r + 1}: {args.connections} connections: {row['ok']:.0f} answered, {row['ok_after_503']:.0f} "
                f"answered after a 503 + Retry-After, {row['errors']:.0f} errors; {row['wall_s']:.2f} s; RSS "
                f"{row['rss_start_mb']:.0f} MB at start, peak {row['peak_rss_mb']:.0f} MB; SIGTERM under load → exit "
                f"{row['exit']:.0f} in {row['sigterm_s']:.3f} s ({before})",
                flush=True,
            )
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if not k.startswith("error:")}
        errors = sum(r["errors"] for r in rows)
        print(
            f"mirror_serve_load: connections {args.connections}, rounds {args.rounds}, "
            f"peak_rss_mb {med['peak_rss_mb']:.0f} (start {med['rss_start_mb']:.0f}), errors {errors:.0f}, "
            f"answered_after_503 {med['ok_after_503']:.0f}, "
            f"burst_s {med['wall_s']:.2f}, sigterm_s {med['sigterm_s']:.3f} (medians; {load()})"
        )
        kinds = {k: v for r in rows for k, v in r.items() if k.startswith("error:")}
        if kinds:
            print(f"  error kinds: {kinds}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
