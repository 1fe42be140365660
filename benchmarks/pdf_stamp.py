"""Cost of reading the arXiv stamp (page 1 only) against parsing the whole PDF, on the real corpus PDFs.

`mirror index` reads the stamp of every PDF in a mirror (to find PDF-only papers and PDFs not named by id) and
parses only the PDFs that become stamp records. This prints the per-PDF cost of both, measured in the same run.

    python benchmarks/pdf_stamp.py [--quick] [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from academiceval.papers import parse_pdf
from academiceval.sources.mirror.pdf_stamp import read_arxiv_stamp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    ap.add_argument("--quick", action="store_true", help="10 PDFs instead of all")
    args = ap.parse_args()
    pdfs = sorted((args.corpus / "pdf").rglob("*.pdf"))
    if args.quick:
        pdfs = pdfs[:10]
    t0 = time.perf_counter()
    stamps = [read_arxiv_stamp(p) for p in pdfs]
    t_stamp = time.perf_counter() - t0
    t0 = time.perf_counter()
    parsed = 0
    for p in pdfs:
        try:
            parse_pdf(p)
            parsed += 1
        except Exception:  # the baseline only needs the time; failures cost time too
            pass
    t_parse = time.perf_counter() - t0
    n = len(pdfs)
    print(f"{n} PDFs, {sum(s is not None for s in stamps)} stamped")
    print(f"page-1 stamp read: {t_stamp:.2f}s total, {1000 * t_stamp / n:.1f} ms/PDF")
    print(f"full parse_pdf (baseline, {parsed} parsed): {t_parse:.2f}s total, {1000 * t_parse / n:.1f} ms/PDF")
    print(f"ratio: stamp read / full parse = {t_stamp / t_parse:.3f}x")


if __name__ == "__main__":
    main()
