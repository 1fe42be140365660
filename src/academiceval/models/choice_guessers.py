"""Blind guessers for multiple choice: how much of an item surface cues alone decide.

A guesser sees an item as the prompt shows it (the context, the anchor, the option texts) but reads no meaning:
it matches words. If one of them beats chance, the item can be answered without reading, and a model's score on
it says little about long-context reading. Every guesser here is deterministic for a seed, and none ever sees the
gold of the item it guesses.

Per-item guessers (each also a runnable baseline, `baseline/<name>-choice`, `models.baselines`):
- `title-match`: the option whose shown title contains the word right before the anchor (the cloze mask);
  abstains when no option matches or the item has no anchor;
- `title-overlap`: `title-match`, else `lexical` (the guesser issue 24 measured at 66/54/54% on the demo);
- `bow`: most distinct context words (±`WINDOW_WORDS` words around the anchor) found in the option;
- `lexical`: Okapi BM25 of those words against the options (the options are the collection), exactly
  `baseline/lexical-choice` (ties: the lowest index);
- `longest`: the longest option (words); `newest`: the option whose work is newest (abstains without dates);
- `centroid`: never sees the context — the option most similar to the other options.
Ties (and abstentions) are broken at random, seeded by (seed, item, guesser), so a tie never favours a position.

Fitted guessers (`cross_validated`): logistic regression over per-option features, each standardised within its
item (value and distance from the item's mean, so "the middle one" is learnable as well as "the largest one"),
fit on the other folds' items — folds grouped (a paper's items stay together) — and scored on the held-out fold:
`candidates-only` (features of the options alone: length, date, title length, centrality) and `combined` (every
feature: the best linear combination of all the guessers' signals).

BM25 here works from term counts cached per text (`TermCache`), since one candidate text is scored against many
contexts; `bm25` reproduces bm25s's Lucene scoring (the library `lexical-choice` calls), tested equal.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from academiceval.models.rag.retrievers import terms
from academiceval.rounds.choice import ChoiceItem

WINDOW_WORDS = 50  # words each side of the anchor that the context guessers read
K1, B = 1.5, 0.75  # bm25s defaults, as `BM25Retriever`
PER_ITEM = ("title-match", "title-overlap", "bow", "lexical", "longest", "newest", "centroid")
FITTED = ("candidates-only", "combined")
GUESSERS = (*PER_ITEM, *FITTED)
_LEAD = re.compile(r"[\s(\[{~\\,;:]+$")
_WORD = re.compile(r"[A-Za-z0-9][\w\-+.']*$")


def anchor_context(context: str, anchor: str, words: int = WINDOW_WORDS) -> str:
    """The words around the anchor (the context's opening when the anchor is missing)."""
    at = context.find(anchor) if anchor else -1
    if at < 0:
        return " ".join(context.split()[: 2 * words])
    before = context[:at].split()[-words:]
    after = context[at + len(anchor) :].split()[:words]
    return " ".join(before + after)


def word_before(context: str, anchor: str) -> list[str]:
    """The terms of the word right before the anchor (brackets, "~" and separators skipped); [] when none."""
    at = context.find(anchor) if anchor else -1
    if at <= 0:
        return []
    head = _LEAD.sub("", context[max(0, at - 200) : at])
    m = _WORD.search(head)
    return terms([m.group(0)])[0] if m else []


class TermCache:
    """Term counts of texts (bm25s's tokenizer, English stop words), kept for the last `size` texts."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._d: OrderedDict[str, Counter[str]] = OrderedDict()

    def get(self, text: str) -> Counter[str]:
        hit = self._d.get(text)
        if hit is not None:
            self._d.move_to_end(text)
            return hit
        counts = Counter(terms([text])[0]) if text.strip() else Counter()
        self._d[text] = counts
        if len(self._d) > self.size:
            self._d.popitem(last=False)
        return counts


@dataclass
class OptionView:
    terms: Counter[str]
    n_terms: int
    words: int
    title_terms: frozenset[str]  # of the title as shown in the option's text (empty when not shown)
    published: date | None


@dataclass
class ItemView:
    """An item reduced to what the guessers read (computed once per item)."""

    item_id: str
    context: list[str]  # terms of the words around the anchor
    before: list[str]  # terms of the word right before the anchor
    options: list[OptionView]
    centrality: list[float] | None = field(default=None, repr=False, compare=False)  # `_centroid`, computed once


def shown_title(title: str, text: str) -> str:
    """The option's title when its text shows it on its first line (full / abstract candidates), else ""."""
    if not title.strip():
        return ""
    first = text.lstrip().split("\n", 1)[0]
    want = set(terms([title])[0])
    return first if want and want <= set(terms([first])[0]) else ""


def item_view(item: ChoiceItem, cache: TermCache | None = None, *, window: int = WINDOW_WORDS) -> ItemView:
    cache = cache if cache is not None else TermCache()
    query = anchor_context(item.context, item.anchor, window) if item.anchor else item.question
    options = []
    for o in item.options:
        counts = cache.get(o.text)
        title = shown_title(o.title, o.text)
        options.append(
            OptionView(
                terms=counts,
                n_terms=sum(counts.values()),
                words=len(o.text.split()),
                title_terms=frozenset(terms([title])[0]) if title else frozenset(),
                published=o.published,
            )
        )
    return ItemView(
        item.item_id, terms([query])[0] if query.strip() else [], word_before(item.context, item.anchor), options
    )


def bm25(query: Sequence[str], docs: Sequence[Counter[str]], lengths: Sequence[int] | None = None) -> np.ndarray:
    """Okapi BM25 (Lucene idf, k1 1.5, b 0.75) of a query against term-count documents, as bm25s scores it:
    the documents are the collection, every query term counts (repeats too), terms outside it add nothing."""
    n = len(docs)
    if n == 0:
        return np.zeros(0)
    dl = np.array(lengths if lengths is not None else [sum(d.values()) for d in docs], dtype=np.float64)
    avg = float(dl.mean()) or 1.0
    out = np.zeros(n, dtype=np.float64)
    df: dict[str, int] = {}
    for t in query:
        if t not in df:
            df[t] = sum(1 for d in docs if t in d)
        if df[t] == 0:
            continue
        idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
        tf = np.array([d.get(t, 0) for d in docs], dtype=np.float64)
        out += idf * tf / (tf + K1 * (1 - B + B * dl / avg))  # bm25s omits the constant (k1 + 1)
    return out.astype(np.float32).astype(np.float64)


# ---- per-item scorers: higher = more likely; None = abstain ---------------------------------------------------
def _title_match(v: ItemView) -> list[float] | None:
    if not v.before:
        return None
    hits = [float(all(t in o.title_terms for t in v.before)) for o in v.options]
    return hits if any(hits) else None


def _lexical(v: ItemView) -> list[float]:
    return [float(x) for x in bm25(v.context, [o.terms for o in v.options], [o.n_terms for o in v.options])]


def _title_overlap(v: ItemView) -> list[float]:
    lex = _lexical(v)
    hit = _title_match(v)
    return [x + (1e9 if hit and hit[i] else 0.0) for i, x in enumerate(lex)]


def _bow(v: ItemView) -> list[float]:
    ctx = set(v.context)
    return [float(len(ctx & o.terms.keys())) for o in v.options]


def _longest(v: ItemView) -> list[float]:
    return [float(o.words) for o in v.options]


def _newest(v: ItemView) -> list[float] | None:
    days = [o.published.toordinal() if o.published else None for o in v.options]
    if all(d is None for d in days):
        return None
    low = min(d for d in days if d is not None)
    return [float(d if d is not None else low - 1) for d in days]


def _cosines(v: ItemView) -> np.ndarray:
    """Cosine similarity between options' log-tf vectors (n × n)."""
    vocab: dict[str, int] = {}
    rows = []
    for o in v.options:
        rows.append({vocab.setdefault(t, len(vocab)): 1 + math.log(c) for t, c in o.terms.items()})
    m = np.zeros((len(rows), max(1, len(vocab))))
    for i, r in enumerate(rows):
        for j, w in r.items():
            m[i, j] = w
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    m /= norms[:, None]
    return m @ m.T


def _centroid(v: ItemView) -> list[float]:
    if v.centrality is None:  # read by the guesser and by `raw_features`: the cosines are computed once per view
        sims = _cosines(v)
        n = len(v.options)
        v.centrality = [float((sims[i].sum() - sims[i, i]) / max(1, n - 1)) for i in range(n)]
    return list(v.centrality)


SCORERS: dict[str, Callable[[ItemView], list[float] | None]] = {
    "title-match": _title_match,
    "title-overlap": _title_overlap,
    "bow": _bow,
    "lexical": _lexical,
    "longest": _longest,
    "newest": _newest,
    "centroid": _centroid,
}


def pick(scores: Sequence[float] | None, n: int, *, seed: int, key: str, ties: str = "random") -> int:
    """The best option; ties (and an abstention, `scores` None) broken at random by (seed, key), or by the lowest
    index when `ties` is "first"."""
    if scores is None:
        return random.Random(f"{seed}:{key}").randrange(n)
    top = max(scores)
    best = [i for i, s in enumerate(scores) if s == top]
    if len(best) == 1 or ties == "first":
        return best[0]
    return random.Random(f"{seed}:{key}").choice(best)


def guess(name: str, view: ItemView, *, seed: int = 0) -> int:
    """One per-item guesser's pick (option index)."""
    scores = SCORERS[name](view)
    return pick(
        scores,
        len(view.options),
        seed=seed,
        key=f"{view.item_id}:{name}",
        ties="first" if name == "lexical" else "random",
    )


# ---- fitted guessers ---------------------------------------------------------------------------------------------
FEATURES = (
    "lexical",
    "bow",
    "bow_share",
    "title_match",
    "title_overlap",
    "before_in_text",
    "longest",
    "newest",
    "centroid",
    "title_words",
)
CANDIDATE_FEATURES = ("longest", "newest", "centroid", "title_words")


def raw_features(v: ItemView) -> np.ndarray:
    """Per option (rows) the guessers' signals (columns `FEATURES`)."""
    n = len(v.options)
    ctx = set(v.context)
    title = _title_match(v) or [0.0] * n
    newest = _newest(v)
    if newest is None:
        newest = [0.0] * n
    cols = [
        _lexical(v),
        _bow(v),
        [len(ctx & o.terms.keys()) / max(1, len(o.terms)) for o in v.options],
        title,
        [float(len(ctx & o.title_terms)) for o in v.options],
        [float(bool(v.before) and all(t in o.terms for t in v.before)) for o in v.options],
        [math.log1p(o.words) for o in v.options],
        newest,
        _centroid(v),
        [float(len(o.title_terms)) for o in v.options],
    ]
    return np.array(cols, dtype=np.float64).T


def standardise(x: np.ndarray) -> np.ndarray:
    """Within one item: each column as z-scores, and their absolute values (distance from the item's mean)."""
    mu = x.mean(axis=0)
    sd = x.std(axis=0)
    sd[sd == 0] = 1.0
    z = (x - mu) / sd
    return np.hstack([z, np.abs(z)])


def columns_of(names: Sequence[str]) -> list[int]:
    idx = [FEATURES.index(n) for n in names]
    return idx + [len(FEATURES) + i for i in idx]


def cross_validated(
    views: Sequence[ItemView],
    golds: Sequence[int],
    groups: Sequence[str],
    features: Sequence[str] = FEATURES,
    *,
    folds: int = 5,
    seed: int = 0,
    matrices: Sequence[np.ndarray] | None = None,
) -> list[int]:
    """Picks of a logistic regression over `features`, each item predicted by a model fit on the folds that do
    not hold its group (its paper): no item's gold is ever seen by the model that guesses it. `matrices` may
    pass the items' `raw_features` when they were computed already."""
    from sklearn.linear_model import LogisticRegression  # scikit-learn: ~0.5 s to import, only fitted guessers

    mats = [standardise(m) for m in (matrices if matrices is not None else [raw_features(v) for v in views])]
    cols = columns_of(features)
    uniq = sorted(set(groups))
    rng = random.Random(f"{seed}:folds")
    rng.shuffle(uniq)
    k = max(2, min(folds, len(uniq)))
    fold_of = {g: i % k for i, g in enumerate(uniq)}
    picks = [0] * len(views)
    for f in range(k):
        train = [i for i, g in enumerate(groups) if fold_of[g] != f]
        test = [i for i, g in enumerate(groups) if fold_of[g] == f]
        if not test:
            continue
        xs = np.vstack([mats[i][:, cols] for i in train]) if train else np.zeros((0, len(cols)))
        ys = np.concatenate([np.eye(len(mats[i]))[golds[i]] for i in train]) if train else np.zeros(0)
        model = None
        if len(set(ys.tolist())) == 2:
            model = LogisticRegression(C=1.0, max_iter=2000).fit(xs, ys)
        for i in test:
            scores = model.decision_function(mats[i][:, cols]).tolist() if model is not None else None
            picks[i] = pick(scores, len(mats[i]), seed=seed, key=f"{views[i].item_id}:cv")
    return picks


def guess_table(
    views: Sequence[ItemView], golds: Sequence[int], groups: Sequence[str], *, seed: int = 0, folds: int = 5
) -> dict[str, list[int]]:
    """Every guesser's pick per item: the per-item ones, then the two fitted ones (cross-validated)."""
    out: dict[str, list[int]] = {name: [guess(name, v, seed=seed) for v in views] for name in PER_ITEM}
    mats = [raw_features(v) for v in views]
    out["candidates-only"] = cross_validated(
        views, golds, groups, CANDIDATE_FEATURES, folds=folds, seed=seed, matrices=mats
    )
    out["combined"] = cross_validated(views, golds, groups, FEATURES, folds=folds, seed=seed, matrices=mats)
    return out
