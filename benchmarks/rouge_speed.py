"""rouge-score vs academiceval's FastRouge on the same real text pairs, in one run.

Prints the time of each, their ratio (target ≥50× for rougeL) and how many pairs' P/R/F differ (target 0).
Two pair sets from ../shared/corpus: `real_text_pairs` (unarXive paragraphs and abstracts capped at 220 words,
L-Eval paper-assistant outputs, SCALAR sections; the set the parity test uses) and `real_section_pairs`
(whole sections up to 900 words: the length of Introduction / Related Work outputs). "cold" starts with an
empty stem cache and a new scorer (every distinct word is stemmed inside the timed loop); "warm" scores the same
pairs again with the same scorer (the steady state of re-scoring). "cold, nltk stemmer" is the cold pass with
nltk's own PorterStemmer.stem in place of academiceval.scores.porter (shows what the stemmer port buys).

    python benchmarks/rouge_speed.py            # ~1,500 paragraph pairs + ~1,300 section pairs, rougeL
    python benchmarks/rouge_speed.py --quick    # 300 + 150 pairs
    python benchmarks/rouge_speed.py --types rougeL,rougeLsum,rouge1,rouge2
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from rouge_score.rouge_scorer import RougeScorer

from academiceval.scores import rouge as rouge_mod
from academiceval.scores.rouge import FastRouge, clear_stem_cache
from academiceval.testing.pairs import one_sentence_per_line, real_section_pairs, real_text_pairs

CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", Path(__file__).resolve().parents[1].parent / "shared" / "corpus"))


def _same(e: dict, g: dict, types: list[str]) -> bool:
    return all(
        (e[t].precision, e[t].recall, e[t].fmeasure) == (g[t].precision, g[t].recall, g[t].fmeasure) for t in types
    )


def compare(name: str, pairs: list[tuple[str, str]], types: list[str]) -> None:
    """Time rouge-score and ours (cold: empty stem cache; warm: the same scorer again) on `pairs`."""
    if "rougeLsum" in types:  # rougeLsum reads one sentence per line
        pairs = [(one_sentence_per_line(a), one_sentence_per_line(b)) for a, b in pairs]
    words = sum(len(a.split()) + len(b.split()) for a, b in pairs)
    print(f"[{name}] pairs: {len(pairs)}  words: {words:,}  types: {','.join(types)}")

    ref = RougeScorer(types, use_stemmer=True)
    t0 = time.perf_counter()
    expected = [ref.score(a, b) for a, b in pairs]
    t_ref = time.perf_counter() - t0

    clear_stem_cache()  # cold: every distinct word is stemmed during the timed loop
    ours = FastRouge(types, use_stemmer=True)
    t0 = time.perf_counter()
    got = [ours.score(a, b) for a, b in pairs]
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = [ours.score(a, b) for a, b in pairs]  # warm: stems known (steady state when scoring many runs)
    t_warm = time.perf_counter() - t0

    port = rouge_mod.porter_stem
    rouge_mod.porter_stem = ref._tokenizer._stemmer.stem  # nltk's stemmer, the one rouge-score uses
    try:
        clear_stem_cache()
        ours_nltk = FastRouge(types, use_stemmer=True)
        t0 = time.perf_counter()
        got_nltk = [ours_nltk.score(a, b) for a, b in pairs]
        t_nltk = time.perf_counter() - t0
    finally:
        rouge_mod.porter_stem = port
        clear_stem_cache()

    differ = sum(
        not (_same(e, g, types) and _same(e, w, types) and _same(e, n, types))
        for e, g, w, n in zip(expected, got, again, got_nltk, strict=True)
    )
    print(f"[{name}] rouge-score: {t_ref:8.3f} s  ({len(pairs) / t_ref:8.1f} pairs/s)")
    print(
        f"[{name}] ours cold:   {t_cold:8.3f} s  ({len(pairs) / t_cold:8.1f} pairs/s)  speed-up {t_ref / t_cold:6.1f}x"
    )
    print(
        f"[{name}] ours warm:   {t_warm:8.3f} s  ({len(pairs) / t_warm:8.1f} pairs/s)  speed-up {t_ref / t_warm:6.1f}x"
    )
    print(
        f"[{name}] ours cold, nltk stemmer: {t_nltk:8.3f} s  ({len(pairs) / t_nltk:8.1f} pairs/s)  "
        f"speed-up {t_ref / t_nltk:6.1f}x"
    )
    print(f"[{name}] pairs whose P/R/F differ from rouge-score: {differ} of {len(pairs)} (target 0)")


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
