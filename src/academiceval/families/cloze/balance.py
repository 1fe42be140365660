"""Distractors that surface cues cannot tell from the gold, and the level check that no blind guesser beats chance
— the adversarial filter of the filtered construction, in the spirit of AFLite (Sakaguchi et al. 2020; Le Bras
et al. 2020): what a linear model over cheap features can predict is taken out.

1. The signal. For every question of a level, each reference of its paper's pool is described by the features
   the blind guessers read (`models.choice_guessers.FEATURES`: BM25 of the ±50 words around the mask against
   the candidate as shown, shared words, the word before the mask in the shown title or the text, length, date,
   centrality, …), standardised within the pool (values and distances from the pool's mean). A logistic
   regression fit on all the level's questions (gold vs the other references; the builder knows the golds)
   gives the surface signal S: how much a reference looks like the answer without reading.
2. The set. Every question gets a target rank t ∈ {0, 1, 2, 3}, each rank given to as many questions
   (`assign_ranks`: a question fits rank t when at least t references score above its gold on S and 3 − t
   below; one that fits no rank still free is left out); the distractors are the t references scoring just
   above the gold on S and the 3 − t just below it ("nearest by the same signal"). On S the gold is then
   first in a quarter of the questions, second in a quarter, …: a guesser that follows the signal, avoids it
   or takes the middle is at chance.
3. The check (`verify`): on the four candidates as shown, with the guessers' own scoring, the gold's rank on S
   must be t and the title match must not single it out; a set that fails is replaced by the next nearest one
   (counted), a question with no passing set — or whose gold has fewer than t references above it or 3 − t
   below it — is dropped, each with its reason.
4. The level (`level_check`): every blind guesser (the fitted ones cross-validated) is measured on the level's
   items; while one is above the limit, the items it gets right that most guessers get right are removed
   (counted), never below the level's minimum.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from academiceval.families.cloze.models import ClozeItem
from academiceval.models.choice_guessers import (
    CANDIDATE_FEATURES,
    FEATURES,
    PER_ITEM,
    ItemView,
    bm25,
    cross_validated,
    guess,
    raw_features,
    standardise,
)

if TYPE_CHECKING:
    from academiceval.families.cloze.filtered import Context, Pending

ATTEMPTS = 4  # candidate sets tried per question (the nearest, then the next nearest ones)
MIN_FIT = 20  # questions a level needs to fit its own signal (fewer: BM25 + the title match)
RANK_SLACK = 0.1  # no target rank given to more than (1 + slack) / 4 of a level's questions


def pool_features(q: Pending) -> tuple[list[int], np.ndarray]:
    """([gold, *others], their raw features against the question's context, columns `FEATURES`)."""
    refs = [q.gold, *q.others]
    texts = [q.views[r][0] for r in refs]
    opts = [q.views[r][1] for r in refs]
    ctx = set(q.context)
    lex = bm25(q.context, [t.terms for t in texts], [t.n_terms for t in texts])
    days = [o.published.toordinal() if o.published else None for o in opts]
    low = min((d for d in days if d is not None), default=0)
    cols = [
        [float(x) for x in lex],
        [float(len(ctx & t.terms.keys())) for t in texts],
        [len(ctx & t.terms.keys()) / max(1, len(t.terms)) for t in texts],
        [float(bool(q.before) and all(w in t.title_terms for w in q.before)) for t in texts],
        [float(len(ctx & t.title_terms)) for t in texts],
        [float(bool(q.before) and all(w in t.terms for w in q.before)) for t in texts],
        [math.log1p(o.words) for o in opts],
        [float(d if d is not None else low - 1) for d in days],
        [q.centrality.get(r, 0.0) for r in refs],
        [float(len(t.title_terms)) for t in texts],
    ]
    return refs, np.array(cols, dtype=np.float64).T


def fit_signal(pending: Sequence[Pending]) -> np.ndarray | None:
    """Weights of the surface signal over the standardised pool features, fit on the level's questions (gold
    vs every other work of the pool); None with fewer than `MIN_FIT` questions."""
    from sklearn.linear_model import LogisticRegression  # scikit-learn: ~0.5 s to import, only when building

    if len(pending) < MIN_FIT:
        return None
    xs, ys = [], []
    for q in pending:
        _, raw = pool_features(q)
        xs.append(standardise(raw))
        ys.append(np.eye(len(raw))[0])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(np.vstack(xs), np.concatenate(ys))
    return np.asarray(model.coef_[0], dtype=np.float64)


def default_signal() -> np.ndarray:
    """BM25 and the title match only (a level too small to fit its own signal)."""
    w = np.zeros(2 * len(FEATURES))
    w[FEATURES.index("lexical")] = 1.0
    w[FEATURES.index("title_match")] = 10.0
    return w


def scores_of(raw: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return standardise(raw) @ weights


def matched_sets(
    gold: int, others: Sequence[int], scores: dict[int, float], rank: int, rng: random.Random
) -> Iterator[list[int]]:
    """Distractor sets with `rank` references scoring above the gold and 3 − `rank` below, nearest first, then
    the next nearest (at most `ATTEMPTS`). References scoring exactly as the gold are split at random."""
    g = scores[gold]
    ties = [r for r in others if scores[r] == g]
    rng.shuffle(ties)
    half = len(ties) // 2
    above = sorted((r for r in others if scores[r] > g), key=lambda r: (scores[r], r)) + ties[:half]
    below = sorted((r for r in others if scores[r] < g), key=lambda r: (-scores[r], r)) + ties[half:]
    need_above, need_below = rank, 3 - rank
    if len(above) < need_above or len(below) < need_below:
        return
    seen: set[tuple[int, ...]] = set()
    for a, b in ((0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2)):
        up, down = above[a : a + need_above], below[b : b + need_below]
        if len(up) < need_above or len(down) < need_below:
            continue
        chosen = tuple(sorted(up + down))
        if chosen in seen:
            continue
        seen.add(chosen)
        yield list(up + down)
        if len(seen) >= ATTEMPTS:
            return


def verify(view: ItemView, gold: int, rank: int, weights: np.ndarray) -> str | None:
    """Why a candidate set fails (None when it passes): on the four candidates as shown, the gold's rank on the
    surface signal is not the target, or the title match singles the gold out."""
    if view.before:
        hits = [i for i, o in enumerate(view.options) if all(t in o.title_terms for t in view.before)]
        if hits == [gold]:
            return "the title of the gold alone names the word before the mask"
    s = scores_of(raw_features(view), weights)
    if sum(1 for i, x in enumerate(s) if x > s[gold] or (x == s[gold] and i < gold)) != rank:
        return "the gold's surface rank among the four differs from the balanced target"
    return None


def surface_ranks(q: Pending, weights: np.ndarray) -> tuple[dict[int, float], tuple[int, int]]:
    """(each pool reference's score on the surface signal, (references above the gold, below it))."""
    refs, raw = pool_features(q)
    scores = dict(zip(refs, scores_of(raw, weights).tolist(), strict=True))
    g = scores[q.gold]
    return scores, (sum(1 for r in q.others if scores[r] > g), sum(1 for r in q.others if scores[r] < g))


def assign_ranks(
    bounds: Sequence[tuple[int, int]], seed: int, n: int = 4, slack: float = RANK_SLACK
) -> list[int | None]:
    """A target rank per question so that the ranks are given (nearly) equally often, or None for a question
    left out. `bounds[i]` = (references above the gold on the signal, below it): rank t fits when at least t are
    above and n − 1 − t below. First as many questions as possible with every rank exactly equally often
    (earliest-deadline greedy, binary search on the count; questions fed in a seeded order, so ties are not
    decided by position); then the rest one by one, each on its least used rank, while no rank holds more than
    (1 + `slack`) / n of the questions (or one more than the least used rank)."""
    order = list(range(len(bounds)))
    random.Random(f"{seed}:ranks").shuffle(order)
    ival = {i: (max(0, n - 1 - bounds[i][1]), min(n - 1, bounds[i][0])) for i in order}
    ival = {i: v for i, v in ival.items() if v[0] <= v[1]}

    def fill(k: int) -> dict[int, int] | None:
        out: dict[int, int] = {}
        for t in range(n):
            free = [i for i in order if i in ival and i not in out and ival[i][0] <= t <= ival[i][1]]
            free.sort(key=lambda i: ival[i][1])
            if len(free) < k:
                return None
            for i in free[:k]:
                out[i] = t
        return out

    lo, hi, best = 0, len(ival) // n, {}
    while lo <= hi:
        mid = (lo + hi) // 2
        got = fill(mid)
        if got is None:
            hi = mid - 1
        else:
            best, lo = got, mid + 1
    counts = Counter({t: 0 for t in range(n)}) + Counter(best.values())
    for i in order:
        if i in best or i not in ival:
            continue
        t = min(range(ival[i][0], ival[i][1] + 1), key=lambda t: (counts[t], t))
        total = sum(counts.values()) + 1
        if counts[t] + 1 <= max(min(counts.values()) + 1, math.floor((1 + slack) * total / n)):
            best[i] = t
            counts[t] += 1
    return [best.get(i) for i in range(len(bounds))]


def select(
    q: Pending, scores: dict[int, float], rank: int, weights: np.ndarray, ctx: Context
) -> tuple[ClozeItem | None, str, bool]:
    """(item, reason it was dropped, whether a set was replaced) for one question at its target rank."""
    r = random.Random(q.qseed)
    slot = r.randrange(q.options.n_candidates)
    failed: Counter[str] = Counter()
    for attempt, distract in enumerate(matched_sets(q.gold, q.others, scores, rank, r)):
        order = list(distract)
        order.insert(slot, q.gold)
        view = ItemView(f"{q.paper.paper_id}:{q.gold}", q.context, q.before, [q.views[x][1] for x in order])
        why = verify(view, slot, rank, weights)
        if why is not None:
            failed[why] += 1
            continue
        return q.make(order, slot, ctx), "", attempt > 0
    if not failed:
        return None, "filter: too few references above or below the gold on surface cues", False
    return None, f"filter: {failed.most_common(1)[0][0]}", False


def select_level(pending: Sequence[Pending], ctx: Context) -> tuple[list[ClozeItem], Counter[str], Counter[str]]:
    """The level's items from its questions: fit the signal, give every question a balanced target rank, choose
    and check each set. Returns (items, skips, notes)."""
    weights = fit_signal(pending)
    w = weights if weights is not None else default_signal()
    skips: Counter[str] = Counter()
    notes: Counter[str] = Counter()
    ranked = [surface_ranks(q, w) for q in pending]
    ranks = assign_ranks([b for _, b in ranked], ctx.seed)
    items: list[ClozeItem] = []
    for q, (scores, _), rank in zip(pending, ranked, ranks, strict=True):
        if rank is None:
            skips["filter: its gold stands out on surface cues (no balanced rank left for it)"] += 1
            continue
        item, why, replaced = select(q, scores, rank, w, ctx)
        if item is None:
            skips[why] += 1
            continue
        items.append(item)
        if replaced:
            notes["filter: candidate set replaced by the next nearest"] += 1
    if weights is None and pending:
        notes[f"filter: fewer than {MIN_FIT} questions, signal = BM25 + title match"] += 1
    return items, skips, notes


def cap_per_paper(items: list[ClozeItem], cap: int | None, seed: int, level: str) -> tuple[list[ClozeItem], int]:
    """At most `cap` items per question paper (a seeded draw per paper); returns (kept, how many dropped)."""
    if cap is None:
        return items, 0
    by_paper: dict[str, list[ClozeItem]] = defaultdict(list)
    for it in items:
        by_paper[it.paper_id].append(it)
    kept: list[ClozeItem] = []
    for pid, its in sorted(by_paper.items()):
        its.sort(key=lambda x: x.sample_id)
        if len(its) > cap:
            its = random.Random(f"{seed}:{pid}:{level}:cap").sample(its, cap)
        kept.extend(its)
    return kept, len(items) - len(kept)


def level_check(
    views: Sequence[ItemView],
    golds: Sequence[int],
    groups: Sequence[str],
    *,
    limit: float,
    min_items: int,
    seed: int = 0,
    max_rounds: int = 60,
    limits: dict[str, float] | None = None,
) -> tuple[list[int], Counter[str], dict[str, list[int]] | None]:
    """Indices of the items kept, and why the others were removed: while a blind guesser (per-item or fitted)
    scores above `limit` (or its own entry in `limits`), remove items it gets right, those most guessers get
    right first (ties: seeded) — as many per round as its excess over the limit — never below `min_items`. The
    per-item guessers' picks do not depend on the other items and are computed once; the fitted ones are refit
    every round. The third value is every guesser's picks on the items kept (None when the last round did not
    compute them), so the build reports the same table without fitting again."""
    bound = {name: min(limit, (limits or {}).get(name, limit)) for name in (*PER_ITEM, "candidates-only", "combined")}
    per_item = {name: [guess(name, v, seed=seed) for v in views] for name in PER_ITEM}
    mats = [raw_features(v) for v in views]
    keep = list(range(len(views)))
    removed: Counter[str] = Counter()
    rng = random.Random(f"{seed}:level-check")
    last: dict[str, list[int]] | None = None
    for _ in range(max_rounds):
        last = None
        if len(keep) <= min_items:
            break
        sub = [views[i] for i in keep]
        g = [golds[i] for i in keep]
        gr = [groups[i] for i in keep]
        m = [mats[i] for i in keep]
        table = {name: [picks[i] for i in keep] for name, picks in per_item.items()}
        table["candidates-only"] = cross_validated(sub, g, gr, CANDIDATE_FEATURES, seed=seed, matrices=m)
        table["combined"] = cross_validated(sub, g, gr, FEATURES, seed=seed, matrices=m)
        acc = {name: sum(p == x for p, x in zip(picks, g, strict=True)) / len(keep) for name, picks in table.items()}
        worst = max(acc, key=lambda n: (acc[n] - bound[n], n))
        if acc[worst] <= bound[worst]:
            last = table
            break
        right = [sum(table[n][j] == g[j] for n in table) for j in range(len(keep))]
        hits = [j for j in range(len(keep)) if table[worst][j] == g[j]]
        rng.shuffle(hits)
        hits.sort(key=lambda j: -right[j])
        n_out = min(len(hits), len(keep) - min_items, max(1, math.ceil((acc[worst] - bound[worst]) * len(keep))))
        out = set(hits[:n_out])
        removed[f"level check: {worst} above {bound[worst]:.0%}"] += len(out)
        keep = [i for j, i in enumerate(keep) if j not in out]
    return keep, removed, last
