"""rouge-score vs rouge-score-rs alone vs academiceval's scorer, on the same real text pairs, in one run.

academiceval's ROUGE is the rouge-score-rs engine behind a thin wrapper (`academiceval.scores.rouge.FastRouge`),
so this prints three throughputs per pair set:
  rouge-score            the reference (pure Python);
  rouge-score-rs         the engine alone: `RougeScorer.score` per pair, and `score_batch` (all cores);
  academiceval           our scorer: `FastRouge.score` per pair and `FastRouge.score_batch`;
then our overhead on top of the engine (target: ours ≥0.9× the engine's throughput) and how many pairs' P/R/F
differ from rouge-score (target 0). Every contender runs once per repeat (default 5, at least 5), in an order
rotated per repeat, on the same pairs; best and median wall time are printed with the machine's load before and
after each repeat. A ratio that contradicts itself (ours, which calls the engine, >1.15× faster than the engine)
is refused (exit 2). Two pair sets from ../shared/corpus: `real_text_pairs` (unarXive paragraphs
and abstracts, L-Eval paper-assistant outputs, SCALAR sections; the set the parity test uses) and
`real_section_pairs` (whole sections up to 900 words: the length of Introduction / Related Work outputs).

    python benchmarks/rouge_speed.py            # ~1,500 paragraph pairs + ~1,300 section pairs, rougeL (slow:
                                                # rouge-score takes minutes per repeat on the sections)
    python benchmarks/rouge_speed.py --quick    # 300 + 150 pairs
    python benchmarks/rouge_speed.py --types rougeL,rougeLsum,rouge1,rouge2
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
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


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f} (1/5 min, {os.cpu_count()} cores)"


def passes_for(fn: Callable[[], object], target_s: float = 1.0) -> int:
    """How many passes of `fn` take about `target_s` (from one warm-up pass)."""
    t0 = time.perf_counter()
    fn()
    return max(1, round(target_s / max(time.perf_counter() - t0, 1e-6)))


def passes(k: int, fn: Callable[[], list[dict]]) -> list[dict]:
    out: list[dict] = []
    for _ in range(k):
        out = fn()
    return out


def interleaved(
    contenders: dict[str, Callable[[], list[dict]]], repeats: int, name: str
) -> tuple[dict[str, list[float]], dict[str, list], list[float]]:
    """Every contender once per repeat, in an order rotated per repeat (so each sees the same background load
    on average); wall seconds per contender and repeat, the last results, the 1-min load before/after each."""
    names = list(contenders)
    walls: dict[str, list[float]] = {k: [] for k in names}
    results: dict[str, list] = {}
    loads: list[float] = []
    for rep in range(repeats):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        loads.append(os.getloadavg()[0])
        for k in order:
            t0 = time.perf_counter()
            results[k] = contenders[k]()
            walls[k].append(time.perf_counter() - t0)
        loads.append(os.getloadavg()[0])
        print(
            f"[{name}] repeat {rep + 1}/{repeats}: "
            + " ".join(f"{k} {walls[k][-1]:.3f}s" for k in names)
            + f" | {load()}",
            flush=True,
        )
    return walls, results, loads


def compare(name: str, pairs: list[tuple[str, str]], types: list[str], repeats: int) -> list[str]:
    """Prints the table for one pair set; returns the self-contradictions found (empty when none)."""
    if "rougeLsum" in types:  # rougeLsum reads one sentence per line
        pairs = [(one_sentence_per_line(a), one_sentence_per_line(b)) for a, b in pairs]
    targets, preds = [a for a, _ in pairs], [b for _, b in pairs]
    words = sum(len(a.split()) + len(b.split()) for a, b in pairs)
    print(f"[{name}] pairs: {len(pairs)}  words: {words:,}  types: {','.join(types)}  repeats: {repeats}  {load()}")

    ref = RougeScorer(types, use_stemmer=True)
    engine = EngineScorer(types, use_stemmer=True)
    ours = FastRouge(types, use_stemmer=True)
    # the engine and ours take well under a second per pass: each timed sample repeats the pass `k` times (the
    # same k for the engine and ours in a mode, so ≥ ~1 s of work per sample), and the time is per pass
    k_pair = passes_for(lambda: [engine.score(a, b) for a, b in pairs])
    k_batch = passes_for(lambda: engine.score_batch(targets, preds))
    contenders: dict[str, Callable[[], list[dict]]] = {
        "rouge-score": lambda: [ref.score(a, b) for a, b in pairs],
        "rouge-score-rs score()": lambda: passes(k_pair, lambda: [engine.score(a, b) for a, b in pairs]),
        "academiceval score()": lambda: passes(k_pair, lambda: [ours.score(a, b) for a, b in pairs]),
        "rouge-score-rs score_batch()": lambda: passes(k_batch, lambda: engine.score_batch(targets, preds)),
        "academiceval score_batch()": lambda: passes(k_batch, lambda: ours.score_batch(targets, preds)),
    }
    print(f"[{name}] passes per timed sample: score() {k_pair}, score_batch() {k_batch}, rouge-score 1")
    walls, got, loads = interleaved(contenders, repeats, name)
    for key, k in (("score()", k_pair), ("score_batch()", k_batch)):
        for who in ("rouge-score-rs", "academiceval"):
            walls[f"{who} {key}"] = [t / k for t in walls[f"{who} {key}"]]
    expected = got["rouge-score"]
    differ = sum(
        not all(_same(e, g, types) for g in gs)
        for e, *gs in zip(expected, *(got[k] for k in contenders if k != "rouge-score"), strict=True)
    )
    n = len(pairs)
    base_best, base_med = min(walls["rouge-score"]), statistics.median(walls["rouge-score"])
    print(f"[{name}] load (1 min) over the repeats: min {min(loads):.2f}, max {max(loads):.2f}")
    print(
        f"[{name}] {'contender':<30} {'best s':>8} {'median s':>9} {'pairs/s (best)':>15}  vs rouge-score best / median"
    )
    for k, ts in walls.items():
        best, med = min(ts), statistics.median(ts)
        vs = f"{base_best / best:7.1f}x / {base_med / med:7.1f}x"
        print(f"[{name}] {k:<30} {best:8.3f} {med:9.3f} {n / best:15,.0f}  {vs}")
    ratio = min(walls["rouge-score-rs score()"]) / min(walls["academiceval score()"])
    ratio_b = min(walls["rouge-score-rs score_batch()"]) / min(walls["academiceval score_batch()"])
    med = statistics.median
    ratio_m = med(walls["rouge-score-rs score()"]) / med(walls["academiceval score()"])
    ratio_bm = med(walls["rouge-score-rs score_batch()"]) / med(walls["academiceval score_batch()"])
    print(
        f"[{name}] academiceval / engine throughput (best; median): per pair {ratio:.3f}x; {ratio_m:.3f}x, "
        f"batch {ratio_b:.3f}x; {ratio_bm:.3f}x (target ≥0.9x)"
    )
    print(f"[{name}] pairs whose P/R/F differ from rouge-score: {differ} of {n} (target 0)")
    # ours calls the engine and does no less: clearly faster than the engine means the load moved under us
    return [
        f"[{name}] academiceval {mode} {r:.2f}x the engine it wraps"
        for mode, r in (("score()", ratio), ("score_batch()", ratio_b))
        if r > 1.15
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="300 paragraph pairs and 150 section pairs")
    ap.add_argument("--types", default="rougeL", help="comma-separated rouge types (default rougeL)")
    ap.add_argument("--only", choices=["paragraphs", "sections"], help="run one pair set only")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved repeats of every contender (≥ 5)")
    args = ap.parse_args()
    if args.repeats < 5:
        sys.exit("--repeats must be at least 5 (best/median of N >= 5)")
    types = [t.strip() for t in args.types.split(",") if t.strip()]
    print(f"corpus: {CORPUS}")
    refused: list[str] = []
    if args.only != "sections":
        pairs = real_text_pairs(CORPUS)  # the pairs tests/scores/test_rouge.py checks
        refused += compare("paragraphs", pairs[:300] if args.quick else pairs, types, args.repeats)
    if args.only != "paragraphs":
        pairs = real_section_pairs(CORPUS)  # section-length texts, as Introduction / Related Work outputs
        refused += compare("sections", pairs[:150] if args.quick else pairs, types, args.repeats)
    for why in refused:
        print(f"REFUSED: {why}: a ratio that contradicts itself; measure again on a quieter machine")
    if refused:
        sys.exit(2)


if __name__ == "__main__":
    main()
