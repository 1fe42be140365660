"""Citation cloze on the real corpus: questions per level, gold-slot distribution, build time, the no-model
baselines' accuracy per level (bootstrap 95% CIs), and the heuristic citation-type classifier's agreement with the
types SCALAR stored in its paper objects.

    PYTHONPATH=src python benchmarks/cloze_build.py [--no-pdfs] [--home DIR] [--cap N]

Inputs: the 72 SCALAR paper objects (`samples/scalar_paper_obj_{anno,more}`) and SCALAR's ICLR-2025 metadata
(exact v1 dates), plus, unless `--no-pdfs`, the corpus PDFs (indexed for their arXiv stamps, then ingested), so
both paths into the store feed the same builder.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", REPO.parent / "shared" / "corpus")).resolve()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=None, help="workspace directory (default: a temporary one)")
    ap.add_argument("--no-pdfs", action="store_true", help="only the SCALAR paper objects")
    ap.add_argument("--cap", type=int, default=100, help="questions per level (SCALAR: 100); 0 = no cap")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from academiceval.families.cloze.build import build_cloze_round
    from academiceval.families.cloze.prompt import choice_of
    from academiceval.models.baselines import BaselineBackend
    from academiceval.papers.ingest import ingest_paths
    from academiceval.scores.mcq import accuracy_by_level, score_item
    from academiceval.sources.mirror.workspace import index_mirror
    from academiceval.store import Workspace

    home = Path(args.home) if args.home else Path(tempfile.mkdtemp(prefix="cloze-bench-"))
    ws = Workspace(home)
    t0 = time.perf_counter()
    for d in (
        "samples/scalar_paper_obj_anno",
        "samples/scalar_paper_obj_more",
        "metadata/scalar_iclr2025_metadata.json",
    ):
        index_mirror(ws, CORPUS / d)
    t_index = time.perf_counter() - t0
    t_ingest = 0.0
    if not args.no_pdfs:
        t1 = time.perf_counter()
        index_mirror(ws, CORPUS / "pdf")  # arXiv stamps → v1 dates for id-named PDFs
        rep = ingest_paths(ws, [CORPUS / "pdf"], workers=1)
        t_ingest = time.perf_counter() - t1
        print(f"PDFs ingested: {len(rep.ok)} ok, {len(rep.skipped)} cached, {len(rep.failed)} failed ({t_ingest:.1f}s)")
    print(f"SCALAR objects indexed in {t_index:.1f}s")

    t2 = time.perf_counter()
    report = build_cloze_round(ws, "cloze-bench", seed=args.seed, overrides={"max_questions": args.cap or None})
    t_build = time.perf_counter() - t2
    print(f"\nbuild time: {t_build:.1f}s for {report.question_papers} dated question papers ({report.links} links)")
    print("\n== questions per level (target >= 60 each)")
    for cfg, items in report.items.items():
        papers = Counter(it.paper_id for it in items)
        from_pdf = sum(1 for it in items if not it.paper_id.startswith("scalar:"))
        print(
            f"{cfg:24s} {len(items):4d} items  {len(papers):3d} papers  max/paper {max(papers.values(), default=0)}"
            f"  from ingested PDFs {from_pdf}  {'MET' if len(items) >= 60 else 'NOT MET'}"
        )
    print("\n== gold-slot distribution (uniform expected)")
    for cfg, items in report.items.items():
        c = Counter(it.label for it in items)
        n = len(items)
        chi2 = sum((c.get(str(k), 0) - n / 4) ** 2 / (n / 4) for k in range(4)) if n else 0.0
        print(
            f"{cfg:24s} "
            + " ".join(f"{k}:{c.get(str(k), 0)}" for k in range(4))
            + f"   chi2(3)={chi2:.2f} (5% critical 7.81)"
        )

    print("\n== baselines (accuracy, bootstrap 95% CI)")
    for model in ("random-choice", "lexical-choice"):
        b = BaselineBackend(model, seed=args.seed)
        scores = [
            score_item(it.sample_id, b.choose_item(choice_of(it)).text, it.label, level=it.preset)
            for items in report.items.values()
            for it in items
        ]
        acc = accuracy_by_level(scores, seed=args.seed)
        for lv in ("easy", "medium", "hard", "all"):
            a = acc.get(lv)
            if a is None:
                continue
            verdict = ""
            if model == "random-choice":
                verdict = "25% inside CI" if a.ci[0] <= 0.25 <= a.ci[1] else "25% OUTSIDE CI"
            print(
                f"baseline/{model:15s} {lv:7s} n={a.n:4d} acc={a.accuracy:.3f} "
                f"CI=[{a.ci[0]:.3f}, {a.ci[1]:.3f}] unparsed={a.unparsed} {verdict}"
            )

    every = [it for items in report.items.values() for it in items]
    from academiceval.scores.mcq import bootstrap_ci

    means, inside = [], 0
    for seed in range(20):
        b = BaselineBackend("random-choice", seed=seed)
        vals = [score_item(it.sample_id, b.choose(it).text, it.label).value for it in every]
        means.append(sum(vals) / len(vals))
        lo, hi = bootstrap_ci(vals, n_boot=1000, seed=seed)
        inside += lo <= 0.25 <= hi
    print(
        f"baseline/random-choice  over 20 seeds (all {len(every)} items): mean acc={sum(means) / len(means):.3f} "
        f"(min {min(means):.3f}, max {max(means):.3f}); 25% inside the 95% CI for {inside}/20 seeds (expected ~19)"
    )

    print("\n== citation type: heuristic vs SCALAR's stored types (all typed citations of the 72 objects)")
    from academiceval.families.cloze.stats import type_agreement

    agr = type_agreement(report.types)["heuristic_vs_source"]
    print(f"agreement {agr['agree']}/{agr['n']} = {agr['rate']:.3f}; confusion (heuristic|scalar): {agr['confusion']}")

    print("\n== skipped (reason: count), per level")
    for lv, c in report.skips.items():
        print(f"[{lv}]")
        for reason, k in c.most_common():
            print(f"   {k:6d}  {reason}")
    print(f"\nround written to {report.path}")


if __name__ == "__main__":
    main()
