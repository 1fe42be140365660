"""ROUGE with exactly rouge-score's semantics, on the rouge-score-rs engine.

rouge-score is the reference (its tokenizer, nltk's Porter stemmer, its LCS tie rule for rougeLsum), but it is
pure Python: an Introduction against its reference takes seconds. rouge-score-rs is an independent Rust
implementation of the same semantics, bit-identical on every pair set this project tests (see
tests/scores/test_rouge.py, which compares against rouge-score itself), and its batch call scores pairs on all
cores without the GIL. So the engine is not ours: this module only fixes the options academiceval uses and gives
the scorers one batch entry point. Our earlier hand-written engine (a Porter port and bit-parallel LCS glue)
was slower per core than rouge-score-rs and was removed (benchmarks/rouge_speed.py shows the three side by side).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rouge_score_rs.rouge_scorer import RougeScorer
from rouge_score_rs.scoring import Score

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

__all__ = ["ROUGE_TYPES", "FastRouge", "Score", "rouge"]


class FastRouge:
    """`rouge_score.rouge_scorer.RougeScorer(rouge_types, use_stemmer=...)` with the same `.score` and
    `.score_multi`, plus `.score_batch` (the fast path: many pairs in one native call, on every core).

    `split_summaries=True` (nltk sentence splitting for rougeLsum) is not offered: it needs nltk's punkt data,
    which is not installed offline; put one sentence per line instead, as rouge-score's default expects.
    """

    def __init__(self, rouge_types: Iterable[str] = ("rougeL",), *, use_stemmer: bool = True) -> None:
        self.rouge_types = tuple(rouge_types)
        for t in self.rouge_types:
            if t not in ("rougeL", "rougeLsum") and not re.fullmatch(r"rouge[1-9]", t):
                raise ValueError(f"unknown ROUGE type {t!r}; use one of {', '.join(ROUGE_TYPES)}")
        self.use_stemmer = use_stemmer
        self._engine = RougeScorer(list(self.rouge_types), use_stemmer=use_stemmer)

    def score(self, target: str, prediction: str) -> dict[str, Score]:
        return self._engine.score(target, prediction)

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Score]:
        """Best reference by F per type (first one on ties, like rouge-score)."""
        return self._engine.score_multi(list(targets), prediction)

    def score_batch(self, targets: Sequence[str], predictions: Sequence[str]) -> list[dict[str, Score]]:
        """`[self.score(t, p) for t, p in zip(targets, predictions)]`, in one native call on all cores
        (`RAYON_NUM_THREADS` limits the threads)."""
        return self._engine.score_batch(list(targets), list(predictions))


def rouge(target: str, prediction: str, rouge_type: str = "rougeL", *, use_stemmer: bool = True) -> Score:
    """One score, for single calls."""
    return FastRouge((rouge_type,), use_stemmer=use_stemmer).score(target, prediction)[rouge_type]
