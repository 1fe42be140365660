"""Blind guessers per level, before / after the filtered construction, and on SCALAR's 300 published questions.

    PYTHONPATH=src python benchmarks/cloze_guessers.py [--before DIR] [--home DIR] [--after auto|none|YYYY-MM-DD]

BEFORE: a cloze round on disk (default: the BEFORE demo round `/work/base/home/rounds/demo-cloze`, built by
SCALAR's construction). AFTER: the filtered construction (the default of `cloze build`) built from the same
workspace (its database copied into a temporary directory first: the BEFORE workspace is never written), with
the demo's level cap (100), once with the live cutoff asked (`--after`, default "auto") and once without one
(`none`), so the guessers' figures can be told apart from the cutoff's effect on the item count. SCALAR: its
300 published question files imported (`families.cloze.importer`), imported / rejected with reasons.

For each: items per level, every blind guesser's accuracy with a bootstrap 95% CI (`families.cloze.guess`; the
fitted ones cross-validated by paper), the random and lexical baselines, and the item defects by kind
(`families.cloze.defects`); for the two imported / built sets the citation-type agreement of the heuristic with
SCALAR's stored type. The load average is printed with every timing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path

from academiceval.families.cloze.build import build_cloze_round
from academiceval.families.cloze.defects import KINDS, defect_rows, round_defects
from academiceval.families.cloze.export import load_items
from academiceval.families.cloze.guess import format_table, guesser_accuracy, level_of, over_limit
from academiceval.families.cloze.importer import read_scalar_questions
from academiceval.families.cloze.models import ClozeItem
from academiceval.families.cloze.stats import agreement
from academiceval.papers.clean import debris_counts
from academiceval.store import Workspace
from academiceval.store.artifacts import load_round

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus")).resolve()
LEVELS = ("easy", "medium", "hard")
TEXT_DEBRIS = ("xref_trails", "image_markup", "math_duplicates", "heading_markup", "link_markup")


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load {a:.2f} {b:.2f} {c:.2f}"


def show(title: str, items: list[ClozeItem]) -> None:
    print(f"\n=== {title}: {len(items)} items ===")
    counts = Counter(level_of(it) for it in items)
    print("items per level: " + ", ".join(f"{lv} {counts.get(lv, 0)}" for lv in LEVELS))
    table = guesser_accuracy(items, seed=0)
    for line in format_table(table):
        print(line)
    over = over_limit(table)
    print("blind guessers above 0.35: " + (", ".join(over) if over else "none"))
    for line in defect_rows(round_defects(items, level_of=level_of), KINDS):
        print(line)
    debris: dict[str, Counter[str]] = {}
    for it in items:
        c = debris.setdefault(level_of(it), Counter())
        for cand in it.candidates:
            c["candidates"] += 1
            for kind, n in debris_counts(cand.text).items():
                if n and kind in TEXT_DEBRIS:
                    c[kind] += 1
    for lv in LEVELS:
        if lv in debris:
            c = debris[lv]
            kinds = ", ".join(f"{k} {c[k]}" for k in TEXT_DEBRIS)
            print(f"candidates with debris, {lv}: {kinds} (of {c['candidates']})")
    typed = agreement((it.citation_type.heuristic, it.citation_type.source) for it in items)
    if typed["n"]:
        print(f"citation type, heuristic vs SCALAR's stored type: {typed['agree']}/{typed['n']} agree")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="/work/base/home/rounds/demo-cloze", help="the BEFORE cloze round")
    ap.add_argument("--home", default="/work/base/home", help="the workspace the AFTER round is built from")
    ap.add_argument("--after", default="auto", help="live cutoff of the AFTER build: auto, none or a date")
    ap.add_argument("--max-questions", type=int, default=100, help="level cap (the demo's: 100)")
    args = ap.parse_args()
    print(load())

    before = list(load_items(load_round(args.before, verify=False)))
    show(f"BEFORE {args.before}", before)

    tmp = Path(tempfile.mkdtemp(prefix="cloze-guessers-"))
    try:
        for name in os.listdir(args.home):  # the database and caches; rounds, runs and PDFs are not read
            src = Path(args.home) / name
            if src.is_file() and name.startswith("academiceval.sqlite"):
                shutil.copy2(src, tmp / name)
        ws = Workspace(tmp)
        cutoffs: list[object] = ["auto" if args.after == "auto" else args.after]
        if args.after != "none":
            cutoffs.append(None)
        for cutoff in cutoffs:
            asked = None if cutoff in (None, "none") else cutoff
            if isinstance(asked, str) and asked != "auto":
                asked = date.fromisoformat(asked)
            t0 = time.perf_counter()
            rep = build_cloze_round(
                ws,
                f"after-{'none' if asked is None else 'cutoff'}",
                cutoff=asked,
                overrides={"max_questions": args.max_questions},
                seed=0,
                force=True,
            )
            after = [it for v in rep.items.values() for it in v]
            show(
                f"AFTER filtered construction, cutoff {rep.cutoff or 'none'} ({rep.cutoff_source}); "
                f"built in {time.perf_counter() - t0:.1f}s, {load()}",
                after,
            )
            for lv, c in rep.skips.items():
                top = "; ".join(f"{k} ×{n}" for k, n in c.most_common(6))
                print(f"  {lv} skipped: {top}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    published = read_scalar_questions([CORPUS / "samples" / "scalar_questions"])
    n_ok = sum(len(v) for v in published.items.values())
    print(f"\nSCALAR's published files: {n_ok} imported, {sum(published.problems.values())} rejected")
    for why, n in published.problems.most_common():
        print(f"  rejected: {why} ×{n}")
    show("SCALAR's published questions", [it for v in published.items.values() for it in v])
    print("\n" + load())


if __name__ == "__main__":
    main()
