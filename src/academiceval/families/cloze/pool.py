"""A question paper's reference pool as the blind guessers see it: each reference's terms in one field and its
centrality among the pool (shared by the filtered construction, which prepares the pool, and `balance`, which
scores it)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from academiceval.models.choice_guessers import OptionView


@dataclass(frozen=True)
class PoolText:
    """A pool reference as the guessers see it in one field (full / body / abstract)."""

    terms: Counter[str]
    n_terms: int
    title_terms: frozenset[str]


def pool_centrality(views: dict[int, OptionView]) -> dict[int, float]:
    """Each reference's mean cosine similarity (log term frequencies) to the others of its pool."""
    refs = sorted(views)
    vocab: dict[str, int] = {}
    rows = [{vocab.setdefault(t, len(vocab)): 1 + math.log(c) for t, c in views[r].terms.items()} for r in refs]
    m = np.zeros((len(refs), max(1, len(vocab))))
    for i, row in enumerate(rows):
        for j, w in row.items():
            m[i, j] = w
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    m /= norms[:, None]
    sims = m @ m.T
    n = len(refs)
    return {r: float((sims[i].sum() - sims[i, i]) / max(1, n - 1)) for i, r in enumerate(refs)}
