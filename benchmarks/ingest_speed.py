"""Ingestion speed vs plain text extraction, measured in the same run over the same PDFs.

Prints pages/s of (a) plain `page.get_text()` over every page (the baseline: the least any PDF-to-text step
must do), (b) full `parse_pdf` (layout, headings, references, citations), and (c) full ingestion into a fresh
workspace with 1 and with 2 worker processes. Targets: parse/plain ratio >= 0.35x; workers=2 faster than 1.
The CPU the pool costs is printed too: on a loaded machine wall time says little about parallel speed-up.

CPU time (time.process_time) is the primary measure of the ratio because the cores of the development machine
are shared with other jobs, which makes wall time noisy; wall time is printed as well.

Usage: python benchmarks/ingest_speed.py [--corpus DIR] [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

from academiceval.papers import parse_pdf
from academiceval.papers.errors import PaperError
from academiceval.papers.ingest import find_pdfs, ingest_paths
from academiceval.store import Workspace

REPO = Path(__file__).resolve().parents[1]


def plain_and_parsed(files: list[Path]) -> tuple[int, float, float, int, float, float]:
    """Per file, plain extraction then full parsing right after it, so load swings on a shared machine hit
    both measurements alike. Returns (pages, wall, CPU) for plain and for parse_pdf."""
    pp = pq = 0
    tp = tq = cp = cq = 0.0
    for f in files:
        t0, c0 = time.perf_counter(), time.process_time()
        with pymupdf.open(f) as doc:
            for page in doc:
                page.get_text()
                pp += 1
        t1, c1 = time.perf_counter(), time.process_time()
        with contextlib.suppress(PaperError):
            pq += parse_pdf(f).pages or 0
        t2, c2 = time.perf_counter(), time.process_time()
        tp, cp, tq, cq = tp + t1 - t0, cp + c1 - c0, tq + t2 - t1, cq + c2 - c1
    return pp, tp, cp, pq, tq, cq


def _cpu() -> float:
    """CPU seconds of this process plus its finished children (the worker processes)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def ingest(files: list[Path], workers: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds incl. workers) of a full ingestion into a fresh workspace."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp) / "ws")
        t0, c0 = time.perf_counter(), _cpu()
        ingest_paths(ws, files, workers=workers)
        elapsed, cpu = time.perf_counter() - t0, _cpu() - c0
        ws.close()
    return elapsed, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--quick", action="store_true", help="12 PDFs instead of all")
    ap.add_argument("--repeat", type=int, default=1, help="repeat each measurement, keep the fastest")
    args = ap.parse_args()
    files = [f for f in find_pdfs([args.corpus / "pdf"]) if "partial" not in f.parts]
    if args.quick:
        files = files[:12]
    plain_and_parsed(files[:3])  # warm-up: font and file caches equally warm for both measurements
    runs = [plain_and_parsed(files) for _ in range(args.repeat)]
    plain_pages, t_plain, c_plain = min((r[:3] for r in runs), key=lambda r: r[2])
    parse_pages, t_parse, c_parse = min((r[3:] for r in runs), key=lambda r: r[2])
    ones, twos = [], []
    for _ in range(args.repeat):  # alternate so both pool sizes see similar load
        ones.append(ingest(files, 1))
        twos.append(ingest(files, 2))
    t_one, cpu_one = min(ones)
    t_two, cpu_two = min(twos)
    ratio_cpu = (parse_pages / c_parse) / (plain_pages / c_plain)
    ratio_wall = (parse_pages / t_parse) / (plain_pages / t_plain)
    print(f"PDFs: {len(files)}, pages: {plain_pages}")
    print(f"plain page.get_text(): {plain_pages / c_plain:8.1f} pages/CPU-s ({c_plain:.2f}s CPU, {t_plain:.2f}s wall)")
    print(f"parse_pdf (full):      {parse_pages / c_parse:8.1f} pages/CPU-s ({c_parse:.2f}s CPU, {t_parse:.2f}s wall)")
    verdict = "MET" if ratio_cpu >= 0.35 else "NOT MET"
    print(
        f"ratio parse/plain: {ratio_cpu:.2f}x by CPU time, {ratio_wall:.2f}x by wall time (target >= 0.35x): {verdict}"
    )
    print(f"ingest workers=1: {plain_pages / t_one:8.1f} pages/s ({t_one:.2f}s wall, {cpu_one:.2f}s CPU)")
    print(f"ingest workers=2: {plain_pages / t_two:8.1f} pages/s ({t_two:.2f}s wall, {cpu_two:.2f}s CPU incl. workers)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"speed-up workers=2 over 1: {t_one / t_two:.2f}x (wall time; {os.cpu_count()} CPUs, "
        f"1-min load average {load:.1f} — other jobs on the machine compete for the same cores)"
    )
    # on an idle machine the wall-time speed-up approaches workers / (CPU ratio); the CPU ratio is the overhead
    print(f"CPU cost of the process pool: workers=2 uses {cpu_two / cpu_one:.2f}x the CPU of workers=1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
