"""Round-build throughput and peak memory at scale (papers replicated under new ids).

The 49 real unarXive papers from ../shared/corpus are replicated under new arXiv-like ids, with v1 dates spread
over weeks and rotating first authors (so random and co-author demos both exist), until the round has about
--samples samples (default 5,000) over title/abstract/introduction × zero-shot, random:1, coauthor:1. The build
runs in a fresh process; it prints samples/s and its peak RSS. Baseline, measured in the same run in another fresh
process: holding the same samples in memory at once (what a non-streaming exporter needs) — the ratio shows what
streaming saves. Target: build peak RSS < 1 GB.

Replicas have identical texts, so the build's token-count cache serves all copies after the first; the first
copy's tokenisation is reported separately (catalogue time of a fresh workspace is dominated by it).

Usage: python benchmarks/build_scale.py [--samples 5000] [--quick] [--keep DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from academiceval.rounds.config import BuildConfig

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SETTINGS = ["zero-shot", "random:1", "coauthor:1"]
TASKS = ("title", "abstract", "introduction")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def populate(home: Path, copies: int) -> int:
    from academiceval.sources.mirror.unarxive import read_unarxive_lines
    from academiceval.store import Workspace
    from academiceval.store.paper_models import Author, Paper

    ws = Workspace(home)
    src = CORPUS / "samples" / "unarXive_sample" / "arXiv_src_2212_086.jsonl"
    with src.open() as f:
        recs = [r for r in read_unarxive_lines(f, path=str(src)) if not isinstance(r, Exception)]
    n = 0
    for c in range(copies):
        metas, papers = [], []
        for i, r in enumerate(recs):
            aid = f"{2300 + c // 12:04d}.{(c % 12) * 1000 + i:05d}"
            lead = Author(name=f"Bench Author {(i + c) % 25}", key=f"bench author {(i + c) % 25}")
            meta = r.meta.model_copy(
                update={
                    "arxiv_id": aid,
                    "published": r.meta.published + timedelta(days=7 * c),
                    "authors": [lead, *r.meta.authors],
                }
            )
            assert r.paper is not None
            paper: Paper = r.paper.model_copy(update={"paper_id": f"bench:{aid}", "arxiv_id": aid})
            metas.append(meta)
            papers.append(paper)
        with ws.transaction() as conn:
            ws.upsert_meta(metas, conn=conn)
            for p in papers:
                ws.put_paper(p)
        n += len(recs)
    ws.close()
    return n


def _build(home: str, q: mp.Queue) -> None:
    from academiceval.rounds.build import build_round
    from academiceval.store import Workspace

    ws = Workspace(home)
    stages: dict[str, float] = {}
    start = time.perf_counter()

    def progress(stage: str, done: int, total: int | None) -> None:
        key = stage.split()[0]
        stages.setdefault(key + ":start", time.perf_counter())
        stages[key + ":end"] = time.perf_counter()

    m = build_round(
        ws, "bench", BuildConfig(settings=SETTINGS, tasks=TASKS, category_level="archive", seed=1), progress=progress
    )
    wall = time.perf_counter() - start
    n = sum(sum(c.values()) for c in m.counts.values())
    q.put(
        {
            "samples": n,
            "wall": wall,
            "rss": _rss_mb(),
            "configs": len(m.configs),
            "stages": {
                k.split(":")[0]: stages[k.split(":")[0] + ":end"] - stages[k] for k in stages if k.endswith(":start")
            },
        }
    )


def _hold(round_dir: str, q: mp.Queue) -> None:
    from academiceval.store.artifacts import load_round

    rnd = load_round(round_dir, verify=False)
    held = [s for c in rnd.configs() for s in rnd.samples(c)]
    q.put({"samples": len(held), "rss": _rss_mb()})


def _run(fn, *args):  # type: ignore[no-untyped-def]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=fn, args=(*args, q))
    p.start()
    out = q.get()
    p.join()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=5000, help="target number of samples (default 5000)")
    ap.add_argument("--quick", action="store_true", help="about 1,000 samples")
    ap.add_argument("--keep", type=Path, help="build in this directory and keep it")
    a = ap.parse_args()
    target = 1000 if a.quick else a.samples
    per_copy = 380  # measured: ~380 samples per copy of the 49 papers with these tasks and settings
    copies = max(1, -(-target // per_copy))
    home = a.keep or Path(tempfile.mkdtemp(prefix="build-scale-"))
    try:
        t = time.perf_counter()
        papers = populate(home, copies)
        print(
            f"workspace: {papers} papers ({copies} copies of 49 real unarXive papers) in {time.perf_counter() - t:.1f}s"
        )
        b = _run(_build, str(home))
        print(
            f"build: {b['samples']} samples in {len(SETTINGS) * len(TASKS)} task-settings ({b['configs']} configs), "
            f"{b['wall']:.1f}s wall → {b['samples'] / b['wall']:.1f} samples/s"
        )
        print("  stages: " + ", ".join(f"{k} {v:.1f}s" for k, v in b["stages"].items()))
        print(f"  peak RSS of the build process: {b['rss']:.0f} MB (target < 1024 MB)")
        h = _run(_hold, str(home / "rounds" / "bench"))
        print(f"baseline (same samples held in memory at once): {h['samples']} samples, peak RSS {h['rss']:.0f} MB")
        print(f"ratio: streaming build peak RSS / in-memory baseline = {b['rss'] / h['rss']:.2f}x")
        size = sum(p.stat().st_size for p in (home / "rounds" / "bench").rglob("*") if p.is_file())
        print(f"round on disk: {size / 1e6:.0f} MB (parquet zstd + JSONL)")
        return 0 if b["rss"] < 1024 else 1
    finally:
        if a.keep is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
