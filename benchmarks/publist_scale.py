"""What `academiceval import --no-parse` costs as a publication list grows (issue 26, item 9).

Two families of lists, made of real metadata from ../shared/corpus (`academiceval.testing.publists`):

- authors: the real lab list (221 entries) + one entry with N real author names from the astro-ph listings and
  its twin listing the same people with initials only (every initial form is a merge candidate): N = 1k, 3k, 10k;
- entries: N real listing records as BibTeX entries: N = 1k, 10k.

Each case runs in a fresh child process and workspace (`import_publist` + `graph_from_list`, what the command
does without `--parse`); the child reports the seconds of that work, its peak RSS and the RSS before the work
(after imports). Cases and contenders are interleaved, each repeated `--repeats` times (median shown). The
ratios that matter are between sizes of one family (linear: time ratio ≈ size ratio) and, with `--baseline SRC`
(e.g. the first version's `src/`), between the two codes at the same N.

    python benchmarks/publist_scale.py                                  # this tree, 5 repeats
    python benchmarks/publist_scale.py --baseline /work/main/src        # + the given tree at 1k authors / entries
    python benchmarks/publist_scale.py --baseline SRC --baseline-sizes a1000,a3000 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_NEAR = [REPO.parent / "shared" / "corpus", REPO.parents[1] / "shared" / "corpus"]  # a checkout, a worktree
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS") or next((p for p in _NEAR if p.is_dir()), _NEAR[0]))
LAB = CORPUS / "lab_publications" / "comp-physics" / "ref.bib"


def _rss_now_mb() -> float:
    """The resident set now (Linux /proc), for the growth the work itself causes; ru_maxrss is only a peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(folder: Path) -> None:
    """Run the import of `folder` in a fresh workspace; print one JSON line."""
    from academiceval.graph.names import graph_from_list
    from academiceval.sources.publist_import import import_publist
    from academiceval.store.workspace import Workspace

    before = _rss_now_mb()
    with tempfile.TemporaryDirectory(prefix="publist-scale-") as home:
        ws = Workspace(home)
        t0 = time.perf_counter()
        rep = import_publist(ws, folder, parse=False)
        metas = [m for m in ws.iter_meta("source='publist'")]
        g = graph_from_list(ws, metas)
        seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"s": seconds, "peak_mb": peak, "before_mb": before, "entries": rep.entries, "merges": len(rep.merges),
           "nodes": g.nodes, "links": g.work.get("links", 0) if hasattr(g, "work") else None}  # fmt: skip
    print(json.dumps(out), flush=True)


def run_case(src: Path, folder: Path, timeout: float) -> dict | None:
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    try:
        p = subprocess.run([sys.executable, __file__, "--child", str(folder)], env=env, capture_output=True,
                           text=True, timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        raise SystemExit(f"child failed on {folder}:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def make_lists(root: Path, sizes: list[str]) -> dict[str, Path]:
    sys.path.insert(0, str(REPO / "src"))  # the generators of this tree (the contenders only import)
    from academiceval.testing.publists import collaboration_bib, entries_bib

    out: dict[str, Path] = {}
    for case in sizes:
        n = int(case[1:])
        folder = root / case
        if case.startswith("a"):
            collaboration_bib(CORPUS, n, folder, base=LAB)
        else:
            entries_bib(CORPUS, n, folder)
        out[case] = folder
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default="a1000,a3000,a10000,e1000,e10000", help="aN = N-author entry; eN = N entries")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", type=Path, help="another tree's src/ (e.g. the first version) to run as well")
    ap.add_argument("--baseline-sizes", default="a300,e1000",
                    help="cases the baseline runs (the first version took 673 s at a1000 on this machine)")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per child run before it is given up")
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    requested = args.sizes.split(",")
    sizes = list(requested)
    base_sizes = set(args.baseline_sizes.split(",")) if args.baseline else set()
    sizes += [c for c in sorted(base_sizes) if c not in sizes]  # a baseline-only size runs for both codes
    contenders = {"this tree": REPO / "src"}
    if args.baseline:
        contenders["baseline"] = args.baseline
    print(f"{os.cpu_count()} CPUs; load average at start {os.getloadavg()[0]:.1f}; repeats {args.repeats}")
    results: dict[tuple[str, str], list[dict | None]] = {}
    with tempfile.TemporaryDirectory(prefix="publist-lists-") as tmp:
        folders = make_lists(Path(tmp), sizes)
        for rep in range(args.repeats):
            for case in sizes:
                for name, src in contenders.items():
                    if name == "baseline" and case not in base_sizes:
                        continue
                    r = run_case(src, folders[case], args.timeout)
                    results.setdefault((case, name), []).append(r)
                    shown = "timeout" if r is None else f"{r['s']:.2f} s, peak {r['peak_mb']:.0f} MB"
                    print(f"  rep {rep + 1} {case:>7} {name:<10} {shown}  (load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")
    print(f"{'case':>7} {'code':<10} {'median s':>9} {'min s':>7} {'peak MB':>8} {'growth MB':>9} {'entries':>7} "
          f"{'merges':>6} {'people':>7}")  # fmt: skip
    med: dict[tuple[str, str], float] = {}
    for (case, name), runs in results.items():
        ok = [r for r in runs if r is not None]
        if not ok:
            print(f"{case:>7} {name:<10} {'> ' + str(int(args.timeout)) + ' s (timeout)':>26}")
            continue
        m = statistics.median(r["s"] for r in ok)
        med[(case, name)] = m
        peak = max(r["peak_mb"] for r in ok)
        growth = max(r["peak_mb"] - r["before_mb"] for r in ok)
        r0 = ok[0]
        print(f"{case:>7} {name:<10} {m:>9.2f} {min(r['s'] for r in ok):>7.2f} {peak:>8.0f} {growth:>9.0f} "
              f"{r0['entries']:>7} {r0['merges']:>6} {r0['nodes']:>7}")  # fmt: skip
    print("\nratios (this tree): time of each size / time of the family's smallest size, vs the size ratio")
    for fam in ("a", "e"):
        have = [c for c in requested if c.startswith(fam) and (c, "this tree") in med]
        cases = sorted(have, key=lambda c: int(c[1:]))
        for c in cases[1:]:
            t = med[(c, "this tree")] / med[(cases[0], "this tree")]
            print(f"  {c} / {cases[0]}: time {t:.2f}x for {int(c[1:]) / int(cases[0][1:]):.0f}x the size")
    for c in sizes:
        if (c, "baseline") in med and (c, "this tree") in med:
            print(f"  baseline / this tree at {c}: {med[(c, 'baseline')] / med[(c, 'this tree')]:.1f}x the time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
