"""BERTScore pairs/s with length batching vs unsorted batching, same pairs, same model, in one run.

Pairs: `academiceval.testing.pairs.real_text_pairs` from ../shared/corpus (abstracts, paragraphs, L-Eval outputs,
SCALAR sections: lengths from a few dozen to over 512 tokens). Each mode starts with an empty embedding cache.
Also checks that both modes give the same scores (batching must not change results beyond float noise).

    HF_HUB_OFFLINE=1 python benchmarks/bertscore_speed.py            # 240 pairs
    HF_HUB_OFFLINE=1 python benchmarks/bertscore_speed.py --quick    # 64 pairs
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from academiceval.scores.bertscore import BertScorer
from academiceval.testing.pairs import real_text_pairs

CORPUS = Path(os.environ.get("ACADEMICEVAL_CORPUS", Path(__file__).resolve().parents[1].parent / "shared" / "corpus"))


def run(pairs: list[tuple[str, str]], *, length_batching: bool, batch_size: int) -> tuple[float, list]:
    scorer = BertScorer("all-MiniLM-L6-v2", layer=6, batch_size=batch_size, length_batching=length_batching)
    scorer._load()  # model loading is not what we measure
    t0 = time.perf_counter()
    res = scorer.score([c for _, c in pairs], [r for r, _ in pairs])
    return time.perf_counter() - t0, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="64 pairs")
    ap.add_argument("--pairs", type=int, default=240)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    n = 64 if args.quick else args.pairs
    allp = real_text_pairs(CORPUS)
    rng = random.Random(0)  # a fixed shuffle: real runs mix short and long outputs
    pairs = rng.sample(allp, min(n, len(allp)))
    import torch

    words = sum(len(a.split()) + len(b.split()) for a, b in pairs)
    print(
        f"pairs: {len(pairs)}  words: {words:,}  batch size: {args.batch_size}  "
        f"torch threads: {torch.get_num_threads()}"
    )
    t_unsorted, r_unsorted = run(pairs, length_batching=False, batch_size=args.batch_size)
    t_sorted, r_sorted = run(pairs, length_batching=True, batch_size=args.batch_size)
    diff = max(abs(a.f - b.f) for a, b in zip(r_sorted, r_unsorted, strict=True))
    cut = sum(1 for r in r_sorted if r.cand_cut or r.ref_cut)
    print(f"unsorted batching: {t_unsorted:7.2f} s  {len(pairs) / t_unsorted:7.2f} pairs/s")
    print(f"length batching:   {t_sorted:7.2f} s  {len(pairs) / t_sorted:7.2f} pairs/s")
    print(f"speed-up {t_unsorted / t_sorted:.2f}x   max |F difference| {diff:.2e}   pairs with tokens cut: {cut}")


if __name__ == "__main__":
    main()
