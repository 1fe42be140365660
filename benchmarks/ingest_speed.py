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


def plain(files: list[Path]) -> tuple[int, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    pages = 0
    for f in files:
        with pymupdf.open(f) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages, time.perf_counter() - t0, time.process_time() - c0


def parsed(files: list[Path]) -> tuple[int, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    pages = 0
    for f in files:
        with contextlib.suppress(PaperError):
            pages += parse_pdf(f).pages or 0
    return pages, time.perf_counter() - t0, time.process_time() - c0


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
    # warm-up pass: font and file caches are then equally warm for both measurements
    plain(files[:3])
    plain_pages, t_plain, c_plain = min((plain(files) for _ in range(args.repeat)), key=lambda r: r[2])
    parse_pages, t_parse, c_parse = min((parsed(files) for _ in range(args.repeat)), key=lambda r: r[2])
    t_one, cpu_one = min(ingest(files, 1) for _ in range(args.repeat))
    t_two, cpu_two = min(ingest(files, 2) for _ in range(args.repeat))
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
