"""Ingest on Ray vs the local process pool on this machine, and the per-PDF costs a cluster plan needs.

Over the corpus' arXiv PDFs (../shared/corpus/pdf, 63 files, or --files N of them):
1. per-PDF costs from one process: CPU seconds per PDF and per page (time.process_time around `parse_pdf`), PDF
   bytes, stored JSON bytes per paper — the figures notes/scale.md scales to 100k PDFs;
2. `ingest_paths(workers=2)` (process pool) into a fresh workspace: pages/s wall;
3. the same on a local Ray started here with 2 CPUs (`ray.init(num_cpus=2)`, its start-up timed apart): pages/s
   wall, and whether the stored rows equal the pool's (content hash of every stored paper, every error).
The cores are shared with other jobs: both runs go back to back, twice, alternating, and the better of each is
reported (the ratio is the figure to read, not the absolute rate).

    nice python benchmarks/ingest_ray.py [--files N]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


def stored(ws) -> tuple[dict[str, str], list[tuple]]:  # type: ignore[no-untyped-def]
    papers = {
        r["paper_id"]: hashlib.sha256(r["json"].encode()).hexdigest()
        for r in ws.db.execute("SELECT paper_id, json FROM parsed_paper")
    }
    errors = sorted((e["sha256"], Path(e["path"]).name, e["code"], e["message"]) for e in ws.ingest_errors())
    return papers, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=0, help="use only the first N PDFs (0 = all)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    import ray

    from academiceval.papers import parse_pdf
    from academiceval.papers.errors import PaperError
    from academiceval.papers.ingest import find_pdfs, ingest_paths
    from academiceval.store import Workspace

    files = find_pdfs([CORPUS / "pdf"])
    files = [f for f in files if "partial" not in f.parts]
    if args.files:
        files = files[: args.files]
    pages = cpu = 0.0
    sizes = json_sizes = 0
    ok = 0
    for f in files:
        c0 = time.process_time()
        with contextlib.suppress(PaperError):
            p = parse_pdf(f)
            pages += p.pages or 0
            json_sizes += len(p.model_dump_json())
            ok += 1
        cpu += time.process_time() - c0
        sizes += f.stat().st_size
    n = len(files)
    print(
        f"per-PDF costs over {n} PDFs ({ok} parsed, {int(pages)} pages): {cpu / n:.2f} CPU s per PDF, "
        f"{cpu / max(pages, 1) * 1000:.0f} CPU ms per page, {sizes / n / 1e6:.2f} MB per PDF, "
        f"{json_sizes / max(ok, 1) / 1e3:.0f} kB stored JSON per paper, {pages / max(ok, 1):.1f} pages per PDF"
    )
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    print(f"ray.init (local, 2 CPUs): {time.perf_counter() - t0:.1f} s")
    best: dict[str, float] = {}
    results: dict[str, tuple] = {}
    try:
        for _ in range(args.rounds):
            for name in ("pool", "ray"):
                with tempfile.TemporaryDirectory(prefix=f"ingest_{name}_") as d:
                    ws = Workspace(Path(d))
                    t0, c0 = time.perf_counter(), time.process_time()
                    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    ingest_paths(ws, files, workers=2, executor="ray" if name == "ray" else "local")
                    wall = time.perf_counter() - t0
                    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    kids = k1.ru_utime + k1.ru_stime - k0.ru_utime - k0.ru_stime
                    results[name] = stored(ws)
                    ws.close()
                best[name] = min(best.get(name, 1e9), wall)
                print(
                    f"  {name}: {wall:.1f} s wall = {pages / wall:.1f} pages/s "
                    f"(parent CPU {time.process_time() - c0:.1f} s, pool workers {kids:.1f} s; Ray workers are not our "
                    "children: not counted)"
                )
    finally:
        ray.shutdown()
    same = results["pool"] == results["ray"]
    print(
        f"ingest_ray: files {n}, pages {int(pages)}, pool_pages_per_s {pages / best['pool']:.1f}, "
        f"ray_pages_per_s {pages / best['ray']:.1f}, ray_over_pool {best['pool'] / best['ray']:.2f}, "
        f"same_stored_rows {same}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
