"""ROUGE with exactly rouge-score's semantics, fast enough for full sections.

Why not call rouge-score directly: its LCS is a pure-Python O(m·n) table and its Porter stemmer runs again on
every token of every call, so scoring an Introduction against its reference takes seconds. Here

* tokenization is rouge-score's own rule (lowercase, non-[a-z0-9] → space, Porter stem tokens longer than 3
  characters with nltk's PorterStemmer rules) in one `str.translate` + `split` pass; the stems come from
  `academiceval.scores.porter` (nltk's rules restated, ~4x faster, tested word-for-word against nltk), cached
  per process, and each scorer maps every distinct word once to a one-character token id;
* a text is then a `str` of token ids, so ROUGE-L's LCS length is rapidfuzz's bit-parallel `LCSseq` on `str`;
* rougeLsum's union-LCS needs one *particular* LCS per sentence pair (rouge-score backtracks its DP table with
  a fixed tie rule). We rebuild that table's rows as bit vectors (Hyyrö's bit-parallel LCS on Python ints),
  read any cell with a popcount, and backtrack with the same rule, so the chosen LCS — and the score — match.

Precision/recall/F are computed with the same float expressions in the same order as rouge-score, so results
are bit-identical (tested on ≥1,000 real pairs).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import LCSseq

from academiceval.scores.porter import stem_lower as porter_stem

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
# rouge-score replaces runs of non-[a-z0-9] by a space and splits on whitespace: its tokens are exactly the
# maximal runs of [a-z0-9] (one `findall` for non-ASCII text; ASCII text takes the `translate` path below).
_WORDS = re.compile(r"[a-z0-9]+")
_VALID = re.compile(r"^[a-z0-9]+$")  # rouge_score.tokenize.VALID_TOKEN_RE


@dataclass(frozen=True, slots=True)
class Score:
    """Same fields as `rouge_score.scoring.Score`."""

    precision: float
    recall: float
    fmeasure: float

    def as_dict(self) -> dict[str, float]:
        return {"p": self.precision, "r": self.recall, "f": self.fmeasure}


_ZERO = Score(0.0, 0.0, 0.0)


def _fmeasure(precision: float, recall: float) -> float:
    # rouge_score.scoring.fmeasure, same expression
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


_STEMS_MAX = 1 << 20
_STEMS: dict[str, str] = {}  # word -> rouge-score token, process-wide (a plain dict: `.get` beats lru_cache)


def stem_token(word: str) -> str:
    """rouge-score's per-token rule for one of its words (a run of [a-z0-9]): stem only words longer than 3
    characters, with nltk's Porter rules (`academiceval.scores.porter`), cached."""
    tok = _STEMS.get(word)
    if tok is None:
        if len(_STEMS) >= _STEMS_MAX:  # bounded memory on huge vocabularies (nonsense tokens, ids, numbers)
            _STEMS.clear()
        tok = _STEMS[word] = porter_stem(word) if len(word) > 3 else word
    return tok


def clear_stem_cache() -> None:
    """Forget every cached stem (benchmarks use it to time a cold first pass)."""
    _STEMS.clear()


# ASCII fast path of the same rule: keep [a-z0-9], every other character becomes a space, split on whitespace.
_ASCII_SPLIT = str.maketrans(
    {chr(i): (chr(i) if chr(i) in "abcdefghijklmnopqrstuvwxyz0123456789" else " ") for i in range(128)}
)


def _words(text: str) -> list[str]:
    """rouge-score's tokens before stemming: maximal runs of [a-z0-9] in `text.lower()`."""
    low = text.lower()
    if low.isascii():
        return low.translate(_ASCII_SPLIT).split()
    return _WORDS.findall(low)


def tokenize(text: str, *, use_stemmer: bool = True) -> list[str]:
    """`rouge_score.tokenize.tokenize(text, PorterStemmer() if use_stemmer else None)`, with cached stems."""
    words = _words(text)
    if use_stemmer:
        words = [stem_token(w) for w in words]
        # a stem is [a-z0-9]* as well; rouge-score's final validity filter only drops empties here
        return [w for w in words if w and _VALID.match(w)]
    return words


# Token ids are single characters, so a token sequence is a `str`: rapidfuzz's LCS runs on it without
# conversion, n-grams are slices, and a word whose token rouge-score drops maps to "" and vanishes in the join.
_SURROGATES = range(0xD800, 0xE000)
_MAX_TOKENS = 0x10FFFF + 1 - len(_SURROGATES)


def _id_char(n: int) -> str:
    return chr(n if n < _SURROGATES.start else n + len(_SURROGATES))


class _WordIds(dict[str, str]):
    """word → id character; a miss (a word new to this scorer) is resolved by `_Vocab._add`, so lookups of known
    words stay in C (`map(d.__getitem__, words)`)."""

    __slots__ = ("_vocab",)

    def __init__(self, vocab: _Vocab) -> None:
        super().__init__()
        self._vocab = vocab

    def __missing__(self, word: str) -> str:
        return self._vocab._add(word)


class _Vocab:
    """Raw word → its final (stemmed) token's id character, so each distinct word is stemmed and looked up
    once per scorer. Equal characters ⇔ equal rouge-score tokens."""

    def __init__(self, use_stemmer: bool) -> None:
        self.use_stemmer = use_stemmer
        self._word_id = _WordIds(self)
        self._token_id: dict[str, str] = {}

    def reset_if_full(self, margin: int = 1 << 17) -> None:
        """Start a fresh id space when it is nearly exhausted (only ever between two scored pairs)."""
        if len(self._token_id) > _MAX_TOKENS - margin:
            self._word_id.clear()
            self._token_id.clear()

    def _add(self, word: str) -> str:
        tok = stem_token(word) if self.use_stemmer else word
        if tok and _VALID.match(tok):
            tid = self._token_id.get(tok)
            if tid is None:
                tid = self._token_id[tok] = _id_char(len(self._token_id))
        else:
            tid = ""  # rouge-score drops this token; "" vanishes in the join
        self._word_id[word] = tid
        return tid

    def encode(self, text: str) -> str:
        """rouge-score's tokens of `text`, one id character per token."""
        return "".join(map(self._word_id.__getitem__, _words(text)))


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence (rapidfuzz, bit-parallel)."""
    if not a or not b:
        return 0
    return int(LCSseq.similarity(a, b))


def _lcs_rows(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[int]:
    """Bit-vector rows of the LCS table: zeros in the low j bits of row i = table[i][j] (Hyyrö 2004)."""
    masks: dict[Hashable, int] = {}
    for j, tok in enumerate(can):
        masks[tok] = masks.get(tok, 0) | (1 << j)
    full = (1 << len(can)) - 1
    v = full
    rows = [v]
    for tok in ref:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    return rows


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[int]:
    """Indices into `ref` of the LCS rouge-score's `lcs_ind` returns (same backtracking tie rule)."""
    rows = _lcs_rows(ref, can)

    def cell(i: int, j: int) -> int:
        return j - (rows[i] & ((1 << j) - 1)).bit_count()

    i, j = len(ref), len(can)
    out: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            out.append(i - 1)
            i -= 1
            j -= 1
        elif cell(i, j - 1) > cell(i - 1, j):
            j -= 1
        else:
            i -= 1
    out.reverse()
    return out


def _ngrams(tokens: str, n: int) -> Counter[tuple[str, ...]]:
    return Counter(zip(*(tokens[k:] for k in range(n)), strict=False)) if len(tokens) >= n else Counter()


def _score_ngrams(target: Counter[tuple[str, ...]], prediction: Counter[tuple[str, ...]]) -> Score:
    overlap = 0
    for ng, c in target.items():
        overlap += min(c, prediction[ng])
    p = overlap / max(sum(prediction.values()), 1)
    r = overlap / max(sum(target.values()), 1)
    return Score(p, r, _fmeasure(p, r))


class FastRouge:
    """Drop-in for `rouge_score.rouge_scorer.RougeScorer(rouge_types, use_stemmer=...)` (`.score`, `.score_multi`).

    `split_summaries=True` (nltk sentence splitting for rougeLsum) is not offered: it needs nltk's punkt data,
    which is not installed offline; put one sentence per line instead, as rouge-score's default expects.
    A scorer keeps its word vocabulary between calls (that is where its speed comes from); it is not
    thread-safe — use one per thread.
    """

    def __init__(self, rouge_types: Iterable[str] = ("rougeL",), *, use_stemmer: bool = True) -> None:
        self.rouge_types = tuple(rouge_types)
        for t in self.rouge_types:
            if t not in ("rougeL", "rougeLsum") and not re.fullmatch(r"rouge[1-9]", t):
                raise ValueError(f"unknown ROUGE type {t!r}; use one of {', '.join(ROUGE_TYPES)}")
        self.use_stemmer = use_stemmer
        self._vocab = _Vocab(use_stemmer)

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, use_stemmer=self.use_stemmer)

    def score(self, target: str, prediction: str) -> dict[str, Score]:
        self._vocab.reset_if_full()
        need_tokens = any(t != "rougeLsum" for t in self.rouge_types)
        tt = self._vocab.encode(target) if need_tokens else ""
        pt = self._vocab.encode(prediction) if need_tokens else ""
        out: dict[str, Score] = {}
        for rt in self.rouge_types:
            if rt == "rougeL":
                out[rt] = _score_lcs(tt, pt)
            elif rt == "rougeLsum":
                out[rt] = self._rouge_lsum(target, prediction)
            else:
                n = int(rt[5:])
                out[rt] = _score_ngrams(_ngrams(tt, n), _ngrams(pt, n))
        return out

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Score]:
        """Best reference by F per type (first one on ties, like numpy.argmax in rouge-score)."""
        all_scores = [self.score(t, prediction) for t in targets]
        best: dict[str, Score] = {}
        for rt in self.rouge_types:
            fs = [s[rt].fmeasure for s in all_scores]
            best[rt] = all_scores[fs.index(max(fs))][rt]
        return best

    def _rouge_lsum(self, target: str, prediction: str) -> Score:
        """rouge-score's `_summary_level_lcs` over newline-separated sentences."""
        enc = self._vocab.encode
        ref_sents = [enc(s) for s in target.split("\n") if len(s)]
        can_sents = [enc(s) for s in prediction.split("\n") if len(s)]
        if not ref_sents or not can_sents:
            return _ZERO
        m = sum(map(len, ref_sents))
        n = sum(map(len, can_sents))
        if not n or not m:
            return _ZERO
        cnt_r: Counter[str] = Counter()
        cnt_c: Counter[str] = Counter()
        for s in ref_sents:
            cnt_r.update(s)
        for s in can_sents:
            cnt_c.update(s)
        hits = 0
        for ref in ref_sents:
            union: set[int] = set()
            for can in can_sents:
                union.update(lcs_indices(ref, can))
            for k in sorted(union):
                tok = ref[k]
                if cnt_c[tok] > 0 and cnt_r[tok] > 0:
                    hits += 1
                    cnt_c[tok] -= 1
                    cnt_r[tok] -= 1
        r = hits / m
        p = hits / n
        return Score(p, r, _fmeasure(p, r))


def _score_lcs(target: str, prediction: str) -> Score:
    if not target or not prediction:
        return _ZERO
    lcs = lcs_length(target, prediction)
    p = lcs / len(prediction)
    r = lcs / len(target)
    return Score(p, r, _fmeasure(p, r))


def rouge(target: str, prediction: str, rouge_type: str = "rougeL", *, use_stemmer: bool = True) -> Score:
    """One score; convenient for single calls (a `FastRouge` reuses its vocabulary across calls)."""
    return FastRouge((rouge_type,), use_stemmer=use_stemmer).score(target, prediction)[rouge_type]
