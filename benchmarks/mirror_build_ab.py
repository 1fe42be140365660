"""The disk index build of this tree against another source tree's (a baseline checkout), on the same snapshot.

Each build runs `DiskIndex.update` (1 parse worker, as `mirror index` does for big files) in its own process,
with `PYTHONPATH` set to the tree's `src`. The two trees are interleaved, in a shuffled order per round, for
`--repeats` (≥ 5) rounds. The script prints each build's wall time and CPU time (writer + parse worker), the
medians, the CPU ratio baseline/this, and the number of paired rounds this tree won. It refuses a ratio that
contradicts the pairwise wins. The load average is printed with every line.

    git worktree add /tmp/main-src main      # or any checkout of the baseline
    python benchmarks/mirror_scale.py --records 60000 --keep --workdir /tmp/ms60k   # a snapshot
    nice python benchmarks/mirror_build_ab.py --baseline /tmp/main-src --mirror /tmp/ms60k/mirror
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHILD = r"""
import os, resource, sys, time
from academiceval.sources.mirror.disk import DiskIndex
t0 = time.perf_counter()
idx = DiskIndex(sys.argv[2], sys.argv[1], workers=1)
idx.update()
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - t0, me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, len(idx))
"""


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} {b:.1f} {c:.1f}"


def build(src: Path, mirror: Path, work: Path) -> tuple[float, float, int]:
    db = work / "index.sqlite"
    for p in work.glob("index.sqlite*"):
        p.unlink()
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-c", CHILD, str(mirror), str(db)], env=env, check=True,
                         capture_output=True, text=True)  # fmt: skip
    wall, cpu, n = out.stdout.split()
    return float(wall), float(cpu), int(n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout of the baseline (its src/ is used)")
    ap.add_argument("--mirror", type=Path, required=True, help="a mirror directory (e.g. a mirror_scale snapshot)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.repeats < 5:
        raise SystemExit("--repeats must be at least 5")
    trees = {"baseline": args.baseline.resolve() / "src", "this": REPO / "src"}
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    rng = random.Random(3)
    with tempfile.TemporaryDirectory(prefix="mirror-build-ab-") as tmp:
        for r in range(args.repeats):
            order = list(trees)
            rng.shuffle(order)
            for k in order:
                wall, cpu, n = build(trees[k], args.mirror, Path(tmp))
                runs[k].append((wall, cpu))
                print(f"round {r + 1} {k:8s}: {n:,} records, wall {wall:.1f} s, CPU {cpu:.1f} s ({load()})", flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
    for k, (w, c) in med.items():
        print(f"{k:8s}: median wall {w:.1f} s, median CPU {c:.1f} s")
    ratio = med["baseline"][1] / med["this"][1]
    wins = sum(t[1] < b[1] for b, t in zip(runs["baseline"], runs["this"], strict=True))
    if (ratio > 1) != (wins > args.repeats / 2) and abs(ratio - 1) > 0.02:
        raise SystemExit(f"refusing the CPU ratio {ratio:.2f}: it contradicts the pairwise wins ({wins})")
    print(f"mirror_build_ab: build CPU baseline/this {ratio:.2f}x, this tree cheaper in {wins} of {args.repeats} "
          f"interleaved rounds ({load()})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
