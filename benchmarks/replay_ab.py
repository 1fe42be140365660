"""Cached-replay cost per record: this tree against another tree's `src` (a base commit), interleaved.

Why: the replay (every answer from the response cache, records written in bulk) is the runner's hot path, and a
change to records or the worker (e.g. epochs: a record key of (sample, epoch), a field left out of written lines)
must not make it slower. Both trees replay the same round against the same local server; each replay is a fresh
process; contenders alternate, REPEATS times, and the median CPU µs per record is compared with the base's. This
tree is also replayed with `--epochs 3` (three records per sample, the sample prepared once).

    python benchmarks/replay_ab.py --base-src /path/to/base/checkout/src [--samples 2000] [--repeats 6]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MINE = str(HERE.parent / "src")
REPLAY = """
import sys
from pathlib import Path
from academiceval.runs.config import RunConfig
from academiceval.runs.runner import run_round
home, round_dir, url, n, epochs, clear = sys.argv[1:7]
kw = {"epochs": int(epochs)} if int(epochs) > 1 else {}
cfg = RunConfig(model="openai/fake-model", base_url=url, max_connections=64, limit=int(n), **kw)
if clear == "1":
    for p in (Path(home) / "runs").glob("*/*/*.jsonl"):
        p.unlink()
s = run_round(Path(home), Path(round_dir), cfg)
print(s.elapsed_s, s.cpu_s, s.total("cached"), s.total("done"))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-src", required=True, help="the other tree's src directory (e.g. a worktree of main)")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=6)
    a = ap.parse_args()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    trees = {"base": a.base_src, "this": MINE}
    work = Path(tempfile.mkdtemp(prefix="replay-ab-"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = subprocess.Popen(
        [sys.executable, "-m", "academiceval.testing.fake_server", "--port", str(port)],
        env=dict(env, PYTHONPATH=MINE),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(3)
        url = f"http://127.0.0.1:{port}/v1"
        sys.path.insert(0, str(HERE))
        from runner_overhead import build_round  # the same ~2 KB windows of real papers

        round_dir = build_round(work / "round", a.samples)

        def replay(tree: str, epochs: int, clear: bool) -> tuple[float, float, float, float]:
            args = [
                str(work / f"{tree}-{epochs}"),
                str(round_dir),
                url,
                str(a.samples),
                str(epochs),
                "1" if clear else "0",
            ]
            out = subprocess.run(
                [sys.executable, "-c", REPLAY, *args],
                env=dict(env, PYTHONPATH=trees[tree]),
                capture_output=True,
                text=True,
            )
            if out.returncode:
                raise SystemExit(out.stderr[-3000:])
            wall, cpu, cached, done = (float(x) for x in out.stdout.split())
            return wall, cpu, cached, done

        contenders = [("base", 1), ("this", 1), ("this", 3)]
        for tree, epochs in contenders:
            replay(tree, epochs, False)  # requests: fills each contender's cache
        results: dict[tuple[str, int], list[tuple[float, float, float]]] = {c: [] for c in contenders}
        for _ in range(a.repeats):
            for tree, epochs in contenders:
                wall, cpu, cached, done = replay(tree, epochs, True)
                if cached != done or done != a.samples * epochs:
                    raise SystemExit(f"{tree}: {cached:.0f} of {done:.0f} records from the cache")
                results[(tree, epochs)].append((wall, cpu, done))
    finally:
        server.terminate()
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"# cached replay, {a.samples} samples, concurrency 64, {a.repeats} interleaved repeats; "
        f"{os.cpu_count()} CPUs; load {tuple(round(x, 1) for x in os.getloadavg())}"
    )
    base = statistics.median(cpu / done for _, cpu, done in results[("base", 1)]) * 1e6
    for (tree, epochs), rows in results.items():
        per = [cpu / done * 1e6 for _, cpu, done in rows]
        rate = statistics.median(done / wall for wall, _, done in rows)
        ratio = statistics.median(per) / base
        print(
            f"{tree:5s} epochs={epochs}: records {rows[0][2]:5.0f}  CPU µs/record median {statistics.median(per):5.1f} "
            f"(best {min(per):5.1f})  records/s median {rate:7.0f}  CPU per record vs base {ratio:.2f}x"
        )


if __name__ == "__main__":
    main()
