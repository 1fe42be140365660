"""rouge-score vs rouge-score-rs alone vs academiceval's scorer, on the same real text pairs, in one run.

academiceval's ROUGE is the rouge-score-rs engine behind a thin wrapper (`academiceval.scores.rouge.FastRouge`),
so this prints three throughputs per pair set:
  rouge-score            the reference (pure Python);
  rouge-score-rs         the engine alone: `RougeScorer.score` per pair, and `score_batch` (all cores);
  academiceval           our scorer: `FastRouge.score` per pair and `FastRouge.score_batch`;
then our overhead on top of the engine (target: ours ≥0.9× the engine's throughput) and how many pairs' P/R/F
differ from rouge-score (target 0). Two pair sets from ../shared/corpus: `real_text_pairs` (unarXive paragraphs
and abstracts, L-Eval paper-assistant outputs, SCALAR sections; the set the parity test uses) and
`real_section_pairs` (whole sections up to 900 words: the length of Introduction / Related Work outputs).

    python benchmarks/rouge_speed.py            # ~1,500 paragraph pairs + ~1,300 section pairs, rougeL
    python benchmarks/rouge_speed.py --quick    # 300 + 150 pairs
    python benchmarks/rouge_speed.py --types rougeL,rougeLsum,rouge1,rouge2
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

from rouge_score.rouge_scorer import RougeScorer
from rouge_score_rs.rouge_scorer import RougeScorer as EngineScorer

from academiceval.scores.rouge import FastRouge
from academiceval.testing.pairs import one_sentence_per_line, real_section_pairs, real_text_pairs

CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", Path(__file__).resolve().parents[1].parent / "shared" / "corpus"))


def _same(e: dict, g: dict, types: list[str]) -> bool:
    return all(
        (e[t].precision, e[t].recall, e[t].fmeasure) == (g[t].precision, g[t].recall, g[t].fmeasure) for t in types
    )


def _timed(fn: Callable[[], list[dict]], repeat: int = 3) -> tuple[float, list[dict]]:
    """Best of `repeat` wall times (the machine is shared; the minimum is the least disturbed run)."""
    best, out = float("inf"), []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def compare(name: str, pairs: list[tuple[str, str]], types: list[str]) -> None:
    if "rougeLsum" in types:  # rougeLsum reads one sentence per line
        pairs = [(one_sentence_per_line(a), one_sentence_per_line(b)) for a, b in pairs]
    targets, preds = [a for a, _ in pairs], [b for _, b in pairs]
    words = sum(len(a.split()) + len(b.split()) for a, b in pairs)
    print(f"[{name}] pairs: {len(pairs)}  words: {words:,}  types: {','.join(types)}")

    ref = RougeScorer(types, use_stemmer=True)
    t0 = time.perf_counter()
    expected = [ref.score(a, b) for a, b in pairs]
    t_ref = time.perf_counter() - t0

    engine = EngineScorer(types, use_stemmer=True)
    ours = FastRouge(types, use_stemmer=True)
    t_eng, got_eng = _timed(lambda: [engine.score(a, b) for a, b in pairs])
    t_ours, got_ours = _timed(lambda: [ours.score(a, b) for a, b in pairs])
    t_eng_b, got_eng_b = _timed(lambda: engine.score_batch(targets, preds))
    t_ours_b, got_ours_b = _timed(lambda: ours.score_batch(targets, preds))

    differ = sum(
        not all(_same(e, g, types) for g in gs)
        for e, *gs in zip(expected, got_eng, got_ours, got_eng_b, got_ours_b, strict=True)
    )
    n = len(pairs)

    def line(label: str, t: float) -> str:
        return f"[{name}] {label:<32} {t:8.3f} s  {n / t:10,.0f} pairs/s  {t_ref / t:7.1f}x rouge-score"

    print(line("rouge-score", t_ref))
    print(line("rouge-score-rs score()", t_eng))
    print(line("academiceval score()", t_ours))
    print(line("rouge-score-rs score_batch()", t_eng_b))
    print(line("academiceval score_batch()", t_ours_b))
    print(
        f"[{name}] academiceval / engine throughput: per pair {t_eng / t_ours:.3f}x, batch {t_eng_b / t_ours_b:.3f}x "
        f"(target ≥0.9x)"
    )
    print(f"[{name}] pairs whose P/R/F differ from rouge-score: {differ} of {n} (target 0)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="300 paragraph pairs and 150 section pairs")
    ap.add_argument("--types", default="rougeL", help="comma-separated rouge types (default rougeL)")
    ap.add_argument("--only", choices=["paragraphs", "sections"], help="run one pair set only")
    args = ap.parse_args()
    types = [t.strip() for t in args.types.split(",") if t.strip()]
    print(f"corpus: {CORPUS}")
    if args.only != "sections":
        pairs = real_text_pairs(CORPUS)  # the pairs tests/scores/test_rouge.py checks
        compare("paragraphs", pairs[:300] if args.quick else pairs, types)
    if args.only != "paragraphs":
        pairs = real_section_pairs(CORPUS)  # section-length texts, as Introduction / Related Work outputs
        compare("sections", pairs[:150] if args.quick else pairs, types)


if __name__ == "__main__":
    main()
