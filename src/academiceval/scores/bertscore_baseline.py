"""BERTScore rescaled against a baseline from the store, so that 0 means "unrelated" (issue 23).

Raw BERTScore has a high floor: with the packaged MiniLM an unrelated paper's Introduction scores about 0.5
against another's. bert-score's answer is rescaling, `(x - b) / (1 - b)`, with `b` the mean score of random,
unrelated pairs (`get_rescale_baseline.py`: a million news sentences under 32 words split into two random halves,
paired, scored per model and layer; the means are its baseline files). Ours computes `b` the same way — a random
split of texts into two halves, the i-th of one paired with the i-th of the other, the mean P, R and F — with two
deliberate differences:

- the texts are the round's own labels of one task, each from a distinct paper (an Introduction's floor is that
  of Introductions, not of news sentences; the labels are what the scores compare outputs with);
- it is scored with the scorer's own model, layer, idf and long-input windows, since those move the floor.

`baseline="store"` (`--metric-arg bertscore.baseline=store`) keeps each record's raw `p`, `r`, `f` and adds
`p_rescaled`, `r_rescaled`, `f_rescaled` beside them, with the baseline and its pair count in the details. The
rescaling itself is bert-score's (the file-baseline path of `BertScorer` is tested equal to bert-score's values).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from academiceval.errors import ConfigError
from academiceval.scores.bertscore import BASELINE_PAIRS, STORE, STORE_BASELINE, BertScorer

__all__ = ["BASELINE_PAIRS", "STORE", "STORE_BASELINE", "baseline_from_pairs", "rescale", "unrelated_pairs"]


def unrelated_pairs(texts: Sequence[str], *, seed: int, max_pairs: int = BASELINE_PAIRS) -> list[tuple[str, str]]:
    """Candidate/reference pairs of unrelated texts, drawn as bert-score draws them: the distinct texts split at
    random into two disjoint halves, the i-th of one paired with the i-th of the other (seeded: same texts, same
    pairs)."""
    order = sorted(set(texts))
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return list(zip(order[:half], order[half : 2 * half], strict=True))[:max_pairs]


def rescale(values: tuple[float, float, float], base: tuple[float, float, float]) -> tuple[float, float, float]:
    """bert-score's rescaling of (P, R, F): `(x - b) / (1 - b)`; 0 = the baseline (unrelated), 1 = identical."""
    p, r, f = ((x - b) / (1 - b) for x, b in zip(values, base, strict=True))
    return p, r, f


def baseline_from_pairs(
    scorer: BertScorer, pairs: Sequence[tuple[str, str]], *, idf_refs: Sequence[str] | None = None
) -> tuple[float, float, float]:
    """The mean raw (P, R, F) over unrelated pairs — what a bert-score baseline file holds for one layer — with
    `scorer`'s own model, layer, idf and long-input handling. Both sides are labels, so both persist in the
    workspace's embedding cache."""
    if not pairs:
        raise ConfigError("no unrelated pairs to compute a BERTScore baseline from", hint="the round needs 2+ labels")
    raw = scorer.derive(baseline=None)
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    raw._embeddings(texts, persist=set(texts))
    res = raw.score([c for c, _ in pairs], [r for _, r in pairs], idf_refs=idf_refs)
    n = len(res)
    return sum(x.p for x in res) / n, sum(x.r for x in res) / n, sum(x.f for x in res) / n
