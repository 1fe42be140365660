"""academiceval's ROUGE (the rouge-score-rs engine) must equal rouge-score bit for bit (P, R and F as floats) on
real text, for every ROUGE type we report, with and without stemming, per pair and in batch."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from academiceval.scores.rouge import FastRouge, rouge
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


def test_unknown_type_rejected():
    with pytest.raises(ValueError, match="unknown ROUGE type"):
        FastRouge(["rougeX"])


def test_batch_equals_per_pair_and_rouge_score_on_whole_sections(corpus):
    """The scorers' fast path (one native call for many pairs) on Introduction/Related-Work-length texts."""
    sections = real_section_pairs(corpus, max_words=900)[:150]
    assert len(sections) == 150 and max(len(b.split()) for _, b in sections) > 600
    types = ["rouge1", "rouge2", "rougeL"]
    ref = rouge_scorer.RougeScorer(types, use_stemmer=True)
    stemmer = ref._tokenizer._stemmer
    stemmer.stem = functools.lru_cache(maxsize=None)(stemmer.stem)
    ours = FastRouge(types)
    batch = ours.score_batch([a for a, _ in sections], [b for _, b in sections])
    for (a, b), got in zip(sections, batch, strict=True):
        e = ref.score(a, b)
        assert all(_triple(e[t]) == _triple(got[t]) for t in types)
        assert got == ours.score(a, b)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab cdé!\n-0", max_size=60), st.text(alphabet="ab cdé!\n-0", max_size=60))
def test_any_small_text_matches_rouge_score(target, prediction):
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    e = rouge_scorer.RougeScorer(types, use_stemmer=True).score(target, prediction)
    g = FastRouge(types).score(target, prediction)
    assert [_triple(e[t]) for t in types] == [_triple(g[t]) for t in types]


def test_batch_rejects_unequal_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        FastRouge().score_batch(["a", "b"], ["a"])
