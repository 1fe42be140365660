"""Kill test: `academiceval collect` SIGKILLed at random moments and resumed ends identical to an uninterrupted run.

Through `mirror serve` (in a thread of this script, on 127.0.0.1) over the real astro-ph listings. The reference
is one uninterrupted `academiceval collect` subprocess; the killed run starts the same command again and again,
each time SIGKILLed at a seeded random moment (a number of served requests plus a random delay, so kills land
during fetches, between fetch and commit, and inside transactions), then lets it finish. Both workspaces are
compared table by table (authors with their queue order and depth, first-author papers, weighted edges).

    python benchmarks/kill_collect.py                 # 20 kills, 150 authors
    python benchmarks/kill_collect.py --quick         # 5 kills, 60 authors
    python benchmarks/kill_collect.py --faults        # the server also answers 10% 429s and 5% 500s
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LISTINGS = REPO.parent / "shared" / "corpus" / "metadata" / "arxiv_browse_astro-ph_listings"
UNTIL = "2018-03-31"


def cli(home: Path, url: str, seeds: list[str], cap: int) -> list[str]:
    args = [sys.executable, "-m", "academiceval.cli.main", "collect", "--api-url", url, "--min-interval", "0"]
    args += ["--max-authors", str(cap), "--until", UNTIL, "--home", str(home)]
    for s in seeds:
        args += ["--seed-author", s]
    return args


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20, help="number of SIGKILLs (default 20)")
    ap.add_argument("--max-authors", type=int, default=150, help="crawl cap (default 150)")
    ap.add_argument("--seeds", type=int, default=20, help="seed authors (first authors of the earliest papers)")
    ap.add_argument("--seed", type=int, default=2026, help="seed of the kill moments")
    ap.add_argument("--faults", action="store_true", help="server injects 10%% 429s and 5%% 500s")
    ap.add_argument("--quick", action="store_true", help="5 kills, 60 authors")
    args = ap.parse_args()
    kills, cap = (5, 60) if args.quick else (args.kills, args.max_authors)

    from academiceval.graph.queries import snapshot
    from academiceval.sources.mirror import load_index
    from academiceval.sources.server import FaultConfig, serve_in_thread
    from academiceval.store import Workspace

    metas = sorted((r.meta for r in load_index(LISTINGS).iter_records()), key=lambda m: (m.published, m.arxiv_id))
    seeds: list[str] = []
    for m in metas:
        if m.authors and m.authors[0].name not in seeds:
            seeds.append(m.authors[0].name)
        if len(seeds) == args.seeds:
            break
    faults = FaultConfig(rate_429=0.10, rate_500=0.05, retry_after=0.05, seed=args.seed) if args.faults else None
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp, serve_in_thread(LISTINGS, faults=faults) as server:
        ref_home, home = Path(tmp) / "reference", Path(tmp) / "killed"
        t0 = time.perf_counter()
        ref = subprocess.run(cli(ref_home, server.url, seeds, cap), env=env, capture_output=True, text=True)
        ref_s = time.perf_counter() - t0
        if ref.returncode != 0:
            print(ref.stderr[-3000:])
            return 2
        ref_requests = server.stats()["api_requests"]
        print(f"uninterrupted run: {ref_requests} requests served, {ref_s:.1f} s")

        landed, moments = 0, []
        for _ in range(kills):
            base = server.stats()["api_requests"]
            target = base + rng.randint(1, max(2, ref_requests // kills))
            delay = rng.uniform(0, 0.05)
            proc = subprocess.Popen(
                cli(home, server.url, seeds, cap), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            deadline = time.monotonic() + 300
            while server.stats()["api_requests"] < target and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(delay)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                landed += 1
            proc.wait(timeout=60)
            ws = Workspace(home)
            visited = ws.db.execute("SELECT COUNT(*) FROM graph_author WHERE state='visited'").fetchone()[0]
            ws.close()
            moments.append(visited)
        fin = subprocess.run(cli(home, server.url, seeds, cap), env=env, capture_output=True, text=True)
        if fin.returncode != 0:
            print(fin.stderr[-3000:])
            return 2
        stats = server.stats()
        a, b = Workspace(ref_home), Workspace(home)
        sa, sb = snapshot(a), snapshot(b)
    print(f"SIGKILLs: {landed} of {kills} landed while running; authors visited at each kill: {moments}")
    if faults:
        print(
            f"faults served: {stats['faults']['429']} x 429, {stats['faults']['500']} x 500 "
            f"of {stats['api_requests']} requests"
        )
    for name in ("authors", "papers", "edges"):
        print(
            f"{name:<8} uninterrupted {len(sa[name]):>6}   killed+resumed {len(sb[name]):>6}   "
            f"identical: {sa[name] == sb[name]}"
        )
    same = sa == sb
    print(f"RESULT: {'identical' if same else 'DIFFERENT'} after {landed} kills")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
